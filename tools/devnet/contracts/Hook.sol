// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import "./Events.sol";
import "./Interfaces.sol";
import {PoolKey, IHooks, PoolManager} from "./Amm.sol";

/// The market hook's logic, run by delegatecall from the HookProxy: pool registration per market,
/// the dynamic fee by time to end, trade gating, and the Hook_MarketTraded price feed.
/// State lives in the proxy, at a hashed slot, clear of the proxy's own slots.
contract MarketHook is IHooks {
    uint24 internal constant DYNAMIC_FEE_FLAG = 0x800000;
    int24 internal constant TICK_SPACING = 60;
    /// Initial YES price window: 0.5 +/- 5% (protocol-facts section 2).
    uint256 internal constant INIT_PRICE_MIN = 475_000;
    uint256 internal constant INIT_PRICE_MAX = 525_000;

    struct State {
        bool initialized;
        bool paused;
        address admin;
        IDiamond diamond;
        address poolManager;
        address router;
        address usdc;
        address trader;
        mapping(bytes32 => uint256) marketOfPool;
        mapping(uint256 => PoolKey) poolOfMarket;
        mapping(address => bool) registrars;
    }

    bytes32 internal constant SLOT = keccak256("predix.devnet.hook.storage");

    error NotPoolManager(address caller);
    error Unauthorized(address caller);
    error UnregisteredPool(bytes32 poolId);
    error InitialPriceOutOfRange(uint256 yesPrice);
    error HookPaused();
    error MarketNotTradable(uint256 marketId);

    function _s() internal pure returns (State storage st) {
        bytes32 slot = SLOT;
        assembly {
            st.slot := slot
        }
    }

    function initialize(address admin, IDiamond diamond, address poolManager, address router) external {
        State storage st = _s();
        require(!st.initialized, "initialized");
        st.initialized = true;
        st.admin = admin;
        st.diamond = diamond;
        st.poolManager = poolManager;
        st.router = router;
        st.usdc = diamond.usdc();
    }

    modifier onlyAdmin() {
        if (msg.sender != _s().admin) revert Unauthorized(msg.sender);
        _;
    }

    modifier onlyPoolManager() {
        if (msg.sender != _s().poolManager) revert NotPoolManager(msg.sender);
        _;
    }

    function setRegistrar(address registrar, bool allowed) external onlyAdmin {
        _s().registrars[registrar] = allowed;
    }

    function setPaused(bool paused) external onlyAdmin {
        _s().paused = paused;
        emit Deployed_hook.Hook_PauseStatusChanged(paused);
    }

    /// Binds the market's YES/USDC pool (dynamic fee, tick spacing 60, this hook) to the market.
    function registerMarketPool(uint256 marketId) external returns (bytes32 id, PoolKey memory key) {
        State storage st = _s();
        if (msg.sender != st.admin && !st.registrars[msg.sender]) revert Unauthorized(msg.sender);
        (address yes, ) = st.diamond.marketTokens(marketId);
        bool yesIsCurrency0 = yes < st.usdc;
        key = PoolKey(yesIsCurrency0 ? yes : st.usdc, yesIsCurrency0 ? st.usdc : yes, DYNAMIC_FEE_FLAG, TICK_SPACING, address(this));
        id = keccak256(abi.encode(key));
        require(st.marketOfPool[id] == 0, "registered");
        st.marketOfPool[id] = marketId;
        st.poolOfMarket[marketId] = key;
        emit Spec_hook.Hook_PoolRegistered(marketId, id, yes, st.usdc, yesIsCurrency0);
    }

    function poolKeyOf(uint256 marketId) external view returns (PoolKey memory) {
        return _s().poolOfMarket[marketId];
    }

    /// The router names the user behind its next swap (it is the pool's `sender`).
    function commitTrader(address trader) external {
        if (msg.sender != _s().router) revert Unauthorized(msg.sender);
        _s().trader = trader;
    }

    function beforeInitialize(address, PoolKey calldata key, uint160 sqrtPriceX96) external view onlyPoolManager {
        _marketOf(key);
        uint256 price = yesPrice(sqrtPriceX96, key.currency0 != _s().usdc);
        if (price < INIT_PRICE_MIN || price > INIT_PRICE_MAX) revert InitialPriceOutOfRange(price);
    }

    function beforeAddLiquidity(address, PoolKey calldata key) external view onlyPoolManager {
        _marketOf(key);
        if (_s().paused) revert HookPaused();
    }

    function beforeSwap(address, PoolKey calldata key) external view onlyPoolManager returns (uint24) {
        uint256 marketId = _marketOf(key);
        if (_s().paused) revert HookPaused();
        if (!_s().diamond.isTradable(marketId)) revert MarketNotTradable(marketId);
        return feeFor(key);
    }

    /// Dynamic LP fee by time to the market's end: > 7d 0.5%, > 3d 1%, > 1d 2%, else 5%.
    function feeFor(PoolKey calldata key) public view returns (uint24) {
        uint256 end = _s().diamond.marketEndTime(_marketOf(key));
        uint256 left = end > block.timestamp ? end - block.timestamp : 0;
        if (left > 7 days) return 5_000;
        if (left > 3 days) return 10_000;
        if (left > 1 days) return 20_000;
        return 50_000;
    }

    function afterSwap(address sender, PoolKey calldata key, int128 amount0, int128 amount1, uint160 sqrtPriceX96, bytes calldata hookData)
        external
        onlyPoolManager
    {
        State storage st = _s();
        uint256 marketId = _marketOf(key);
        bool yesIsCurrency0 = key.currency0 != st.usdc;
        address trader = sender == st.router && st.trader != address(0) ? st.trader : sender;
        st.trader = address(0);
        (int128 yesDelta, int128 usdcDelta) = yesIsCurrency0 ? (amount0, amount1) : (amount1, amount0);
        uint256 usdcVolume = _abs(usdcDelta);
        uint256 price = yesPrice(sqrtPriceX96, yesIsCurrency0);
        // The swapper bought YES when its YES delta is positive.
        _emitTraded(marketId, trader, yesDelta > 0, usdcVolume, _abs(yesDelta), price);
        if (hookData.length >= 20) {
            address referrer = address(bytes20(hookData[0:20]));
            if (referrer != address(0)) emit Deployed_hook.Hook_ReferralRecorded(marketId, referrer, trader, usdcVolume);
        }
    }

    function _emitTraded(uint256 marketId, address trader, bool isBuy, uint256 usdcVolume, uint256 yesVolume, uint256 price) internal {
        if (_s().diamond.deployedVariants()) {
            emit Deployed_hook.Hook_MarketTraded(marketId, trader, isBuy, usdcVolume, yesVolume, price);
        } else {
            emit Spec_hook.Hook_MarketTraded(marketId, trader, isBuy, usdcVolume, yesVolume, price, 1e6 - price);
        }
    }

    /// YES price, 1e6-scaled, clamped to [0, 1e6] (both tokens have 6 decimals).
    function yesPrice(uint160 sqrtPriceX96, bool yesIsCurrency0) public pure returns (uint256) {
        uint256 scaled = (uint256(sqrtPriceX96) * uint256(sqrtPriceX96) / (1 << 96)) * 1e6 / (1 << 96);
        uint256 price = yesIsCurrency0 ? scaled : (scaled == 0 ? 1e6 : 1e12 / scaled);
        return price > 1e6 ? 1e6 : price;
    }

    function _marketOf(PoolKey calldata key) internal view returns (uint256 marketId) {
        bytes32 id = keccak256(abi.encode(key));
        marketId = _s().marketOfPool[id];
        if (marketId == 0) revert UnregisteredPool(id);
    }

    function _abs(int128 value) internal pure returns (uint256) {
        return uint256(int256(value < 0 ? -value : value));
    }
}

/// The hook's address: a proxy whose implementation changes only through a timelocked upgrade
/// (propose, wait `upgradeDelay`, execute; or cancel).
contract HookProxy {
    bytes32 internal constant IMPLEMENTATION_SLOT = keccak256("predix.devnet.hookproxy.implementation");
    bytes32 internal constant PENDING_SLOT = keccak256("predix.devnet.hookproxy.pending");
    bytes32 internal constant READY_AT_SLOT = keccak256("predix.devnet.hookproxy.readyAt");
    address public immutable proxyAdmin;
    uint256 public immutable upgradeDelay;

    error NotProxyAdmin(address caller);
    error UpgradeNotReady(uint256 readyAt);
    error NoPendingUpgrade();

    constructor(address implementation, address admin, uint256 delay, bytes memory initData) {
        proxyAdmin = admin;
        upgradeDelay = delay;
        _store(IMPLEMENTATION_SLOT, uint256(uint160(implementation)));
        (bool ok, bytes memory reason) = implementation.delegatecall(initData);
        if (!ok) {
            assembly {
                revert(add(reason, 32), mload(reason))
            }
        }
    }

    function implementation() public view returns (address) {
        return address(uint160(_load(IMPLEMENTATION_SLOT)));
    }

    function pendingUpgrade() external view returns (address, uint256) {
        return (address(uint160(_load(PENDING_SLOT))), _load(READY_AT_SLOT));
    }

    function proposeUpgrade(address next) external {
        if (msg.sender != proxyAdmin) revert NotProxyAdmin(msg.sender);
        require(next.code.length > 0, "not a contract");
        uint256 readyAt = block.timestamp + upgradeDelay;
        _store(PENDING_SLOT, uint256(uint160(next)));
        _store(READY_AT_SLOT, readyAt);
        emit Deployed_hookProxy.Hook_UpgradeProposed(next, readyAt);
    }

    function executeUpgrade() external {
        if (msg.sender != proxyAdmin) revert NotProxyAdmin(msg.sender);
        address next = address(uint160(_load(PENDING_SLOT)));
        if (next == address(0)) revert NoPendingUpgrade();
        uint256 readyAt = _load(READY_AT_SLOT);
        if (block.timestamp < readyAt) revert UpgradeNotReady(readyAt);
        _store(IMPLEMENTATION_SLOT, uint256(uint160(next)));
        _store(PENDING_SLOT, 0);
        _store(READY_AT_SLOT, 0);
        emit Deployed_hookProxy.Hook_Upgraded(next);
    }

    function cancelUpgrade() external {
        if (msg.sender != proxyAdmin) revert NotProxyAdmin(msg.sender);
        address next = address(uint160(_load(PENDING_SLOT)));
        if (next == address(0)) revert NoPendingUpgrade();
        _store(PENDING_SLOT, 0);
        _store(READY_AT_SLOT, 0);
        emit Deployed_hookProxy.Hook_UpgradeCancelled(next);
    }

    fallback() external payable {
        address target = implementation();
        assembly {
            calldatacopy(0, 0, calldatasize())
            let ok := delegatecall(gas(), target, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            switch ok
            case 0 { revert(0, returndatasize()) }
            default { return(0, returndatasize()) }
        }
    }

    function _load(bytes32 slot) internal view returns (uint256 value) {
        assembly {
            value := sload(slot)
        }
    }

    function _store(bytes32 slot, uint256 value) internal {
        assembly {
            sstore(slot, value)
        }
    }
}
