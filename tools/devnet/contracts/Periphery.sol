// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import "./Interfaces.sol";
import {PoolKey, PoolManager} from "./Amm.sol";
import {MarketHook} from "./Hook.sol";

/// Delayed execution of admin calls: queue, wait `delay`, execute (or cancel).
contract Timelock {
    address public immutable admin;
    uint256 public immutable delay;
    mapping(bytes32 => uint256) public readyAt;

    event CallQueued(bytes32 indexed id, address target, bytes data, uint256 readyAt);
    event CallExecuted(bytes32 indexed id);
    event CallCancelled(bytes32 indexed id);

    constructor(address admin_, uint256 delay_) {
        admin = admin_;
        delay = delay_;
    }

    receive() external payable {}

    function queue(address target, bytes calldata data, bytes32 salt) external returns (bytes32 id) {
        require(msg.sender == admin, "admin");
        id = keccak256(abi.encode(target, data, salt));
        require(readyAt[id] == 0, "queued");
        readyAt[id] = block.timestamp + delay;
        emit CallQueued(id, target, data, readyAt[id]);
    }

    function execute(address target, bytes calldata data, bytes32 salt) external returns (bytes memory) {
        require(msg.sender == admin, "admin");
        bytes32 id = keccak256(abi.encode(target, data, salt));
        require(readyAt[id] != 0 && block.timestamp >= readyAt[id], "not ready");
        delete readyAt[id];
        (bool ok, bytes memory result) = target.call(data);
        require(ok, "call failed");
        emit CallExecuted(id);
        return result;
    }

    function cancel(bytes32 id) external {
        require(msg.sender == admin, "admin");
        require(readyAt[id] != 0, "not queued");
        delete readyAt[id];
        emit CallCancelled(id);
    }
}

interface IMarketCreation {
    function createMarket(string calldata question, uint256 endTime, address oracle) external returns (uint256);
}

/// One call from a question to a tradable market: creates it on the diamond, registers and
/// initializes its YES/USDC pool at 0.5, and seeds full-range liquidity from the caller's USDC
/// (split into YES+NO; the YES goes into the pool with matching USDC, the NO to the caller).
contract MarketFactory {
    IDiamond public immutable diamond;
    MarketHook public immutable hook;
    PoolManager public immutable poolManager;
    address public immutable usdc;
    /// sqrt(0.5) * 2^96 and sqrt(2) * 2^96: YES at 0.5 whichever side it sorts on.
    uint160 internal constant SQRT_HALF_X96 = 56022770974786139918731938227;
    uint160 internal constant SQRT_TWO_X96 = 112045541949572279837463876454;

    event MarketLaunched(uint256 indexed marketId, bytes32 indexed poolId, address indexed creator, uint256 seed);

    constructor(IDiamond diamond_, MarketHook hook_, PoolManager poolManager_) {
        diamond = diamond_;
        hook = hook_;
        poolManager = poolManager_;
        usdc = diamond_.usdc();
    }

    /// `seed` USDC is split; `seed` YES plus about seed/2 USDC (bought at 0.5) become liquidity.
    function launch(string calldata question, uint256 endTime, address oracle, uint256 seed) external returns (uint256 marketId) {
        marketId = IMarketCreation(address(diamond)).createMarket(question, endTime, oracle);
        seedPool(marketId, seed);
    }

    /// Registers, initializes at 0.5 and seeds the pool of an existing market (event children).
    function seedPool(uint256 marketId, uint256 seed) public {
        (bytes32 id, PoolKey memory key) = hook.registerMarketPool(marketId);
        bool yesIs0 = key.currency0 != usdc;
        poolManager.initialize(key, yesIs0 ? SQRT_HALF_X96 : SQRT_TWO_X96);
        if (seed > 0) _seed(marketId, key, yesIs0, seed);
        emit MarketLaunched(marketId, id, msg.sender, seed);
    }

    function _seed(uint256 marketId, PoolKey memory key, bool yesIs0, uint256 seed) internal {
        (address yes, address no) = diamond.marketTokens(marketId);
        // seed YES + seed/2 USDC at price 0.5: L = amount1 * 2^96 / sqrtP (or amount0 * sqrtP / 2^96).
        IERC20(usdc).transferFrom(msg.sender, address(this), seed + seed / 2 + 2);
        IERC20(usdc).approve(address(diamond), seed);
        diamond.splitPosition(marketId, seed);
        IERC20(no).transfer(msg.sender, seed);
        IERC20(yes).approve(address(poolManager), type(uint256).max);
        IERC20(usdc).approve(address(poolManager), type(uint256).max);
        (int24 lower, int24 upper) = poolManager.fullRange(key.tickSpacing);
        uint256 liquidity = yesIs0 ? (seed * SQRT_HALF_X96) >> 96 : (seed << 96) / SQRT_TWO_X96;
        // Slightly under the exact figure so rounding never asks for more than was set aside.
        poolManager.modifyLiquidity(key, lower, upper, int256(liquidity * 999 / 1000), bytes32(marketId));
        uint256 left = IERC20(usdc).balanceOf(address(this));
        if (left > 0) IERC20(usdc).transfer(msg.sender, left);
        left = IERC20(yes).balanceOf(address(this));
        if (left > 0) IERC20(yes).transfer(msg.sender, left);
    }
}
