// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import "./Events.sol";
import "./Interfaces.sol";

/// A Uniswap-v4-shaped pool key; PoolId = keccak256(abi.encode(key)).
struct PoolKey {
    address currency0;
    address currency1;
    uint24 fee;
    int24 tickSpacing;
    address hooks;
}

/// Tick <-> sqrtPriceX96, written here from the definition sqrtP(tick) = sqrt(1.0001)^tick * 2^96.
/// sqrt(1.0001)^-(2^i) in Q128 is obtained by repeated squaring of its first power; the product
/// over the set bits of |tick| gives the ratio, inverted for positive ticks. The inverse is a
/// binary search, exact with respect to the forward function.
library TickMath {
    int24 internal constant MIN_TICK = -887272;
    int24 internal constant MAX_TICK = 887272;
    /// floor(2^128 / sqrt(1.0001)), computed with exact integer square roots.
    uint256 internal constant INV_SQRT_STEP_Q128 = 0xfffcb933bd6fad37aa2d162d1a594001;

    function sqrtPriceAtTick(int24 tick) internal pure returns (uint160) {
        require(tick >= MIN_TICK && tick <= MAX_TICK, "tick out of range");
        uint256 absTick = tick < 0 ? uint256(-int256(tick)) : uint256(int256(tick));
        uint256 ratio = 1 << 128;
        uint256 power = INV_SQRT_STEP_Q128;
        while (absTick != 0) {
            if (absTick & 1 != 0) ratio = (ratio * power) >> 128;
            absTick >>= 1;
            if (absTick != 0) power = (power * power) >> 128;
        }
        if (tick > 0) ratio = type(uint256).max / ratio;
        // Q128 -> Q96, rounded up so that sqrtPriceAtTick(tickAtSqrtPrice(p)) <= p holds.
        return uint160((ratio >> 32) + (ratio % (1 << 32) == 0 ? 0 : 1));
    }

    /// The greatest tick whose price is at or below `sqrtPriceX96`.
    function tickAtSqrtPrice(uint160 sqrtPriceX96) internal pure returns (int24) {
        int24 low = MIN_TICK;
        int24 high = MAX_TICK;
        while (low < high) {
            int24 mid = int24((int256(low) + int256(high) + 1) >> 1);
            if (sqrtPriceAtTick(mid) <= sqrtPriceX96) low = mid;
            else high = mid - 1;
        }
        return low;
    }
}

/// What the pool manager asks of a pool's hook.
interface IHooks {
    function beforeInitialize(address sender, PoolKey calldata key, uint160 sqrtPriceX96) external;
    function beforeAddLiquidity(address sender, PoolKey calldata key) external;
    /// The LP fee (pips, 1e6 = 100%) for this swap.
    function beforeSwap(address sender, PoolKey calldata key) external returns (uint24 fee);
    function afterSwap(address sender, PoolKey calldata key, int128 amount0, int128 amount1, uint160 sqrtPriceX96, bytes calldata hookData) external;
    function feeFor(PoolKey calldata key) external view returns (uint24);
}

/// Paid by the swapper after it has received its output (flash accounting, simplified).
interface ISwapCallback {
    function payForSwap(address token, uint256 amount, bytes calldata data) external;
}

/// A singleton of constant-product concentrated-liquidity pools in the shape of Uniswap v4's
/// PoolManager. Simplification (documented): positions span the full usable range, so the
/// active liquidity is the sum of all positions and a swap never crosses an initialized tick;
/// within that range the swap arithmetic is v3/v4's: sqrtP' = L*sqrtP / (L + x*sqrtP) for token0
/// in, sqrtP' = sqrtP + y/L for token1 in.
contract PoolManager {
    uint256 internal constant Q96 = 1 << 96;
    uint24 internal constant DYNAMIC_FEE_FLAG = 0x800000;

    struct Pool {
        uint160 sqrtPriceX96;
        int24 tick;
        uint128 liquidity;
        bool initialized;
    }

    struct SwapResult {
        uint256 amountIn;
        uint256 amountOut;
        uint160 sqrtPriceAfter;
        uint24 fee;
        int128 delta0;
        int128 delta1;
    }

    mapping(bytes32 => Pool) public pools;
    mapping(bytes32 => uint128) public positions;

    error PoolNotInitialized(bytes32 id);
    error FullRangeOnly(int24 tickLower, int24 tickUpper);
    error NoLiquidity(bytes32 id);
    error Unpaid(address token, uint256 owed);

    function poolId(PoolKey memory key) public pure returns (bytes32) {
        return keccak256(abi.encode(key));
    }

    function fullRange(int24 tickSpacing) public pure returns (int24 lower, int24 upper) {
        upper = (TickMath.MAX_TICK / tickSpacing) * tickSpacing;
        lower = -upper;
    }

    function initialize(PoolKey calldata key, uint160 sqrtPriceX96) external returns (int24 tick) {
        require(key.currency0 < key.currency1, "currencies unsorted");
        bytes32 id = poolId(key);
        Pool storage pool = pools[id];
        require(!pool.initialized, "initialized");
        if (key.hooks != address(0)) IHooks(key.hooks).beforeInitialize(msg.sender, key, sqrtPriceX96);
        tick = TickMath.tickAtSqrtPrice(sqrtPriceX96);
        pool.sqrtPriceX96 = sqrtPriceX96;
        pool.tick = tick;
        pool.initialized = true;
        emit Spec_poolManager.Initialize(id, key.currency0, key.currency1, key.fee, key.tickSpacing, key.hooks, sqrtPriceX96, tick);
    }

    /// Adds (delta > 0, paid by the caller) or removes (delta < 0, paid to the caller) liquidity
    /// of the caller's position (owner, range, salt).
    function modifyLiquidity(PoolKey calldata key, int24 tickLower, int24 tickUpper, int256 liquidityDelta, bytes32 salt)
        external
        returns (uint256 amount0, uint256 amount1)
    {
        bytes32 id = poolId(key);
        if (!pools[id].initialized) revert PoolNotInitialized(id);
        (int24 lower, int24 upper) = fullRange(key.tickSpacing);
        if (tickLower != lower || tickUpper != upper) revert FullRangeOnly(tickLower, tickUpper);
        if (liquidityDelta > 0 && key.hooks != address(0)) IHooks(key.hooks).beforeAddLiquidity(msg.sender, key);
        bytes32 position = keccak256(abi.encode(id, msg.sender, tickLower, tickUpper, salt));
        (amount0, amount1) = _applyLiquidity(id, position, lower, upper, liquidityDelta);
        _settle(key, liquidityDelta > 0, amount0, amount1);
        emit Spec_poolManager.ModifyLiquidity(id, msg.sender, tickLower, tickUpper, liquidityDelta, salt);
    }

    function _applyLiquidity(bytes32 id, bytes32 position, int24 lower, int24 upper, int256 delta)
        internal
        returns (uint256 amount0, uint256 amount1)
    {
        Pool storage pool = pools[id];
        bool adding = delta > 0;
        uint128 size = uint128(adding ? uint256(delta) : uint256(-delta));
        (amount0, amount1) = _amounts(pool.sqrtPriceX96, TickMath.sqrtPriceAtTick(lower), TickMath.sqrtPriceAtTick(upper), size, adding);
        if (adding) {
            pool.liquidity += size;
            positions[position] += size;
        } else {
            require(positions[position] >= size, "position too small");
            pool.liquidity -= size;
            positions[position] -= size;
        }
    }

    function _settle(PoolKey calldata key, bool receiving, uint256 amount0, uint256 amount1) internal {
        if (receiving) {
            IERC20(key.currency0).transferFrom(msg.sender, address(this), amount0);
            IERC20(key.currency1).transferFrom(msg.sender, address(this), amount1);
        } else {
            IERC20(key.currency0).transfer(msg.sender, amount0);
            IERC20(key.currency1).transfer(msg.sender, amount1);
        }
    }

    /// Token amounts of `liquidity` over [sqrtLower, sqrtUpper] at the current price; rounded
    /// up when the pool receives them, down when it pays.
    function _amounts(uint160 sqrtP, uint160 sqrtLower, uint160 sqrtUpper, uint128 liquidity, bool up)
        internal
        pure
        returns (uint256 amount0, uint256 amount1)
    {
        uint256 l = liquidity;
        amount0 = _div(l * Q96, sqrtP, up) - (l * Q96) / sqrtUpper;
        amount1 = _div(l * (uint256(sqrtP) - sqrtLower), Q96, up);
    }

    function _div(uint256 a, uint256 b, bool up) internal pure returns (uint256) {
        return up ? (a + b - 1) / b : a / b;
    }

    /// The swap's outcome at the current state, fee included, without moving anything.
    /// exactInput: `amount` is what the swapper pays; else what it receives.
    function quote(PoolKey calldata key, bool zeroForOne, bool exactInput, uint256 amount) public view returns (SwapResult memory r) {
        Pool storage pool = pools[poolId(key)];
        if (!pool.initialized) revert PoolNotInitialized(poolId(key));
        if (pool.liquidity == 0) revert NoLiquidity(poolId(key));
        r.fee = key.hooks != address(0) && key.fee == DYNAMIC_FEE_FLAG ? IHooks(key.hooks).feeFor(key) : key.fee;
        uint256 l = pool.liquidity;
        uint256 p = pool.sqrtPriceX96;
        if (exactInput) {
            uint256 net = (amount * (1e6 - r.fee)) / 1e6;
            if (zeroForOne) {
                r.sqrtPriceAfter = uint160(_div(l * p, l + (net * p) / Q96, true));
                r.amountOut = (l * (p - r.sqrtPriceAfter)) / Q96;
            } else {
                r.sqrtPriceAfter = uint160(p + (net * Q96) / l);
                r.amountOut = (l * Q96) / p - _div(l * Q96, r.sqrtPriceAfter, true);
            }
            r.amountIn = amount;
        } else {
            uint256 net;
            if (zeroForOne) {
                uint256 drop = _div(amount * Q96, l, true);
                require(drop < p, "output too large");
                r.sqrtPriceAfter = uint160(p - drop);
                net = _div(l * Q96, r.sqrtPriceAfter, true) - (l * Q96) / p;
            } else {
                require(amount * p / Q96 < l, "output too large");
                r.sqrtPriceAfter = uint160(_div(l * p, l - (amount * p) / Q96, true));
                net = _div(l * (r.sqrtPriceAfter - p), Q96, true);
            }
            r.amountIn = _div(net * 1e6, 1e6 - r.fee, true);
            r.amountOut = amount;
        }
    }

    /// Sends the output to the caller first, then asks it to pay the input through
    /// `ISwapCallback.payForSwap` and checks that it did.
    function swap(PoolKey calldata key, bool zeroForOne, bool exactInput, uint256 amount, bytes calldata hookData, bytes calldata callbackData)
        external
        returns (uint256 amountIn, uint256 amountOut)
    {
        if (key.hooks != address(0)) IHooks(key.hooks).beforeSwap(msg.sender, key);
        SwapResult memory r = quote(key, zeroForOne, exactInput, amount);
        _move(key, zeroForOne, r);
        (address tokenIn, address tokenOut) = zeroForOne ? (key.currency0, key.currency1) : (key.currency1, key.currency0);
        IERC20(tokenOut).transfer(msg.sender, r.amountOut);
        uint256 before = IERC20(tokenIn).balanceOf(address(this));
        ISwapCallback(msg.sender).payForSwap(tokenIn, r.amountIn, callbackData);
        if (IERC20(tokenIn).balanceOf(address(this)) < before + r.amountIn) revert Unpaid(tokenIn, r.amountIn);
        _report(key, zeroForOne, r, hookData);
        return (r.amountIn, r.amountOut);
    }

    function _move(PoolKey calldata key, bool, SwapResult memory r) internal {
        Pool storage pool = pools[poolId(key)];
        pool.sqrtPriceX96 = r.sqrtPriceAfter;
        pool.tick = TickMath.tickAtSqrtPrice(r.sqrtPriceAfter);
    }

    /// Swap deltas are the swapper's: negative = paid into the pool.
    function _report(PoolKey calldata key, bool zeroForOne, SwapResult memory r, bytes calldata hookData) internal {
        int128 paid = -int128(int256(r.amountIn));
        int128 received = int128(int256(r.amountOut));
        (r.delta0, r.delta1) = zeroForOne ? (paid, received) : (received, paid);
        _emitSwap(poolId(key), r);
        if (key.hooks != address(0)) IHooks(key.hooks).afterSwap(msg.sender, key, r.delta0, r.delta1, r.sqrtPriceAfter, hookData);
    }

    function _emitSwap(bytes32 id, SwapResult memory r) internal {
        Pool storage pool = pools[id];
        emit Spec_poolManager.Swap(id, msg.sender, r.delta0, r.delta1, r.sqrtPriceAfter, pool.liquidity, pool.tick, r.fee);
    }
}
