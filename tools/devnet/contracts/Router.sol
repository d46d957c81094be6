// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import "./Events.sol";
import "./Interfaces.sol";
import {PoolKey, PoolManager, ISwapCallback} from "./Amm.sol";
import {MarketHook} from "./Hook.sol";

/// The trading entry point: exact-input buys and sells of YES and NO, CLOB first at prices at
/// least as good as the AMM's marginal price, the AMM for the rest (protocol-facts section 3).
/// NO is virtual on the AMM side: buying NO splits USDC and sells the YES into the pool; selling
/// NO buys YES from the pool and merges. The router never keeps a balance: whatever is left of
/// the input after a trade goes back to the trader (`DustRefunded`).
contract Router is ISwapCallback {
    uint256 internal constant MIN_TRADE_AMOUNT = 1000;
    uint256 internal constant PRICE_UNIT = 1e6;
    uint256 internal constant MAX_CLOB_PRICE = 990_000;
    uint256 internal constant MIN_CLOB_PRICE = 10_000;

    IDiamond public immutable diamond;
    IExchange public immutable exchange;
    PoolManager public immutable poolManager;
    address public immutable permit2;
    MarketHook public hook;
    address public immutable usdc;
    address internal immutable deployer;
    mapping(address => mapping(address => bool)) internal approved;

    struct Trade {
        uint8 tradeType;
        uint256 marketId;
        uint256 amountIn;
        uint256 minOut;
        address recipient;
        uint256 maxFills;
        address referrer;
        address yes;
        address no;
        uint256 clobFilled;
        uint256 clobSpent;
        uint256 ammFilled;
    }

    error DeadlineExpired(uint256 deadline);
    error ZeroAmount();
    error InvalidRecipient(address recipient);
    error ExactInUnfilled();
    error InsufficientOutput(uint256 actual, uint256 minimum);
    error NotPoolManager(address caller);
    error MarketNotTradable(uint256 marketId);

    constructor(IDiamond diamond_, IExchange exchange_, PoolManager poolManager_, address permit2_) {
        diamond = diamond_;
        exchange = exchange_;
        poolManager = poolManager_;
        permit2 = permit2_;
        usdc = diamond_.usdc();
        deployer = msg.sender;
    }

    /// Set once, after the hook proxy (which names this router) exists.
    function setHook(MarketHook hook_) external {
        require(msg.sender == deployer && address(hook) == address(0), "hook set");
        hook = hook_;
    }

    function buyYes(uint256 marketId, uint256 amountIn, uint256 minOut, address recipient, uint256 maxFills, uint256 deadline)
        external
        returns (uint256, uint256, uint256)
    {
        return trade(Sides.BUY_YES, marketId, amountIn, minOut, recipient, maxFills, deadline, address(0));
    }

    function sellYes(uint256 marketId, uint256 amountIn, uint256 minOut, address recipient, uint256 maxFills, uint256 deadline)
        external
        returns (uint256, uint256, uint256)
    {
        return trade(Sides.SELL_YES, marketId, amountIn, minOut, recipient, maxFills, deadline, address(0));
    }

    function buyNo(uint256 marketId, uint256 amountIn, uint256 minOut, address recipient, uint256 maxFills, uint256 deadline)
        external
        returns (uint256, uint256, uint256)
    {
        return trade(Sides.BUY_NO, marketId, amountIn, minOut, recipient, maxFills, deadline, address(0));
    }

    function sellNo(uint256 marketId, uint256 amountIn, uint256 minOut, address recipient, uint256 maxFills, uint256 deadline)
        external
        returns (uint256, uint256, uint256)
    {
        return trade(Sides.SELL_NO, marketId, amountIn, minOut, recipient, maxFills, deadline, address(0));
    }

    /// Any trade type, with an optional referrer recorded by the hook.
    /// Returns (amountOut, clobFilled, ammFilled), all in output-token units.
    function trade(uint8 tradeType, uint256 marketId, uint256 amountIn, uint256 minOut, address recipient, uint256 maxFills, uint256 deadline, address referrer)
        public
        returns (uint256, uint256, uint256)
    {
        if (block.timestamp > deadline) revert DeadlineExpired(deadline);
        if (amountIn < MIN_TRADE_AMOUNT) revert ZeroAmount();
        if (!diamond.isTradable(marketId)) revert MarketNotTradable(marketId);
        Trade memory t;
        t.tradeType = tradeType;
        t.marketId = marketId;
        t.amountIn = amountIn;
        t.minOut = minOut;
        t.recipient = recipient;
        t.maxFills = maxFills == 0 ? 10 : maxFills;
        t.referrer = referrer;
        (t.yes, t.no) = diamond.marketTokens(marketId);
        _checkRecipient(t);
        address tokenIn = _tokenIn(t);
        IERC20(tokenIn).transferFrom(msg.sender, address(this), amountIn);
        _clobLeg(t, tokenIn);
        uint256 rest = amountIn - t.clobSpent;
        if (rest >= MIN_TRADE_AMOUNT) t.ammFilled = _ammLeg(t, rest);
        uint256 amountOut = t.clobFilled + t.ammFilled;
        if (amountOut == 0) revert ExactInUnfilled();
        if (amountOut < minOut) revert InsufficientOutput(amountOut, minOut);
        _refundDust(t);
        _emitTrade(t, amountOut);
        return (amountOut, t.clobFilled, t.ammFilled);
    }

    function _tokenIn(Trade memory t) internal view returns (address) {
        if (t.tradeType == Sides.BUY_YES || t.tradeType == Sides.BUY_NO) return usdc;
        return t.tradeType == Sides.SELL_YES ? t.yes : t.no;
    }

    function _checkRecipient(Trade memory t) internal view {
        address r = t.recipient;
        if (
            r == address(0) || r == address(this) || r == address(diamond) || r == address(exchange) || r == address(hook)
                || r == address(poolManager) || r == permit2 || r == t.yes || r == t.no || r == usdc
        ) revert InvalidRecipient(r);
    }

    /// CLOB at the AMM's marginal price or better; any revert of the exchange means 100% AMM.
    function _clobLeg(Trade memory t, address tokenIn) internal {
        _approveOnce(tokenIn, address(exchange));
        try exchange.fillMarketOrder(t.marketId, t.tradeType, _clobLimit(t), t.amountIn, t.recipient, t.maxFills) returns (uint256 filled, uint256 cost) {
            t.clobFilled = filled;
            t.clobSpent = cost;
        } catch (bytes memory reason) {
            bytes4 selector = reason.length >= 4 ? bytes4(reason) : bytes4(0);
            emit Spec_router.ClobSkipped(t.marketId, t.recipient, selector);
        }
    }

    /// The CLOB price limit: the AMM's fee-adjusted spot on the taker's side, on the price grid.
    function _clobLimit(Trade memory t) internal view returns (uint256 limit) {
        PoolKey memory key = hook.poolKeyOf(t.marketId);
        (uint160 sqrtP, , uint128 liquidity, bool initialized) = poolManager.pools(poolManager.poolId(key));
        if (!initialized || liquidity == 0) {
            return t.tradeType == Sides.BUY_YES || t.tradeType == Sides.BUY_NO ? MAX_CLOB_PRICE : MIN_CLOB_PRICE;
        }
        uint256 fee = hook.feeFor(key);
        uint256 yes = hook.yesPrice(sqrtP, key.currency0 == t.yes);
        uint256 buyYes = (yes * PRICE_UNIT) / (PRICE_UNIT - fee);
        uint256 sellYes = (yes * (PRICE_UNIT - fee)) / PRICE_UNIT;
        if (t.tradeType == Sides.BUY_YES) limit = buyYes;
        else if (t.tradeType == Sides.SELL_YES) limit = sellYes;
        else if (t.tradeType == Sides.BUY_NO) limit = PRICE_UNIT > sellYes ? PRICE_UNIT - sellYes : 0;
        else limit = PRICE_UNIT > buyYes ? PRICE_UNIT - buyYes : 0;
        if (limit > MAX_CLOB_PRICE) limit = MAX_CLOB_PRICE;
        if (limit < MIN_CLOB_PRICE) limit = MIN_CLOB_PRICE;
    }

    function _ammLeg(Trade memory t, uint256 amount) internal returns (uint256 out) {
        PoolKey memory key = hook.poolKeyOf(t.marketId);
        bool yesIs0 = key.currency0 == t.yes;
        bytes memory hookData = t.referrer == address(0) ? bytes("") : abi.encodePacked(t.referrer);
        hook.commitTrader(msg.sender);
        if (t.tradeType == Sides.BUY_YES) {
            (, out) = poolManager.swap(key, !yesIs0, true, amount, hookData, abi.encode(t.marketId, uint256(0)));
            IERC20(t.yes).transfer(t.recipient, out);
        } else if (t.tradeType == Sides.SELL_YES) {
            (, out) = poolManager.swap(key, yesIs0, true, amount, hookData, abi.encode(t.marketId, uint256(0)));
            IERC20(usdc).transfer(t.recipient, out);
        } else if (t.tradeType == Sides.BUY_NO) {
            // Mint m YES+NO, sell the m YES: costs m - proceeds(m), which must fit in `amount`.
            // A 0.5% cushion under the exact figure absorbs price moves between quote and swap;
            // the unused USDC goes back to the trader as dust.
            uint256 mint = (_mintAmount(key, yesIs0, amount) * 995) / 1000;
            poolManager.swap(key, yesIs0, true, mint, hookData, abi.encode(t.marketId, Sides.BUY_NO));
            IERC20(t.no).transfer(t.recipient, mint);
            out = mint;
        } else {
            // Buy `amount` YES, merge with the NO sold: the USDC left after paying the pool is the output.
            (uint256 cost, ) = poolManager.swap(key, !yesIs0, false, amount, hookData, abi.encode(t.marketId, Sides.SELL_NO));
            out = amount - cost;
            IERC20(usdc).transfer(t.recipient, out);
        }
    }

    /// The largest mint m (to 1 raw unit) with m - (USDC from selling m YES) <= budget.
    function _mintAmount(PoolKey memory key, bool yesIs0, uint256 budget) internal view returns (uint256) {
        uint256 low = budget;
        uint256 high = budget * 50;
        while (low < high) {
            uint256 mid = (low + high + 1) / 2;
            PoolManager.SwapResult memory r = poolManager.quote(key, yesIs0, true, mid);
            if (mid - r.amountOut <= budget) low = mid;
            else high = mid - 1;
        }
        return low;
    }

    /// The pool has sent the output; pay `amount` of `token`, minting or merging first for NO.
    function payForSwap(address token, uint256 amount, bytes calldata data) external {
        if (msg.sender != address(poolManager)) revert NotPoolManager(msg.sender);
        (uint256 marketId, uint256 mode) = abi.decode(data, (uint256, uint256));
        if (mode == Sides.BUY_NO) {
            _approveOnce(usdc, address(diamond));
            diamond.splitPosition(marketId, amount);
        } else if (mode == Sides.SELL_NO) {
            (address yes, ) = diamond.marketTokens(marketId);
            diamond.mergePositions(marketId, IERC20(yes).balanceOf(address(this)));
        }
        IERC20(token).transfer(address(poolManager), amount);
    }

    function _refundDust(Trade memory t) internal {
        address[3] memory tokens = [usdc, t.yes, t.no];
        for (uint256 i = 0; i < 3; i++) {
            uint256 left = IERC20(tokens[i]).balanceOf(address(this));
            if (left > 0) {
                IERC20(tokens[i]).transfer(msg.sender, left);
                emit Spec_router.DustRefunded(msg.sender, tokens[i], left);
            }
        }
    }

    function _emitTrade(Trade memory t, uint256 amountOut) internal {
        if (diamond.deployedVariants()) {
            emit Deployed_router.Trade(t.marketId, msg.sender, t.recipient, t.tradeType, t.amountIn, amountOut, t.clobFilled, t.ammFilled, bytes32(0));
        } else {
            emit Spec_router.Trade(t.marketId, msg.sender, t.recipient, t.tradeType, t.amountIn, amountOut, t.clobFilled, t.ammFilled);
        }
    }

    function _approveOnce(address token, address spender) internal {
        if (approved[token][spender]) return;
        approved[token][spender] = true;
        IERC20(token).approve(spender, type(uint256).max);
    }
}
