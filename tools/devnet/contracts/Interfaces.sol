// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

interface IERC20 {
    function balanceOf(address account) external view returns (uint256);
    function transfer(address to, uint256 value) external returns (bool);
    function transferFrom(address from, address to, uint256 value) external returns (bool);
    function approve(address spender, uint256 value) external returns (bool);
}

/// What the exchange, router, hook and oracles call on the diamond.
interface IDiamond {
    function usdc() external view returns (address);
    function feeRecipient() external view returns (address);
    function deployedVariants() external view returns (bool);
    function marketTokens(uint256 marketId) external view returns (address yes, address no);
    function marketEndTime(uint256 marketId) external view returns (uint256);
    /// Open for trading: exists, not resolved, not in refund mode, before its end time, not paused.
    function isTradable(uint256 marketId) external view returns (bool);
    /// Pulls `amount` USDC from the caller and mints `amount` YES and NO to the caller.
    function splitPosition(uint256 marketId, uint256 amount) external;
    /// Burns `amount` YES and NO of the caller and pays it `amount` USDC.
    function mergePositions(uint256 marketId, uint256 amount) external;
    function resolveMarket(uint256 marketId, bool outcome) external;
    function resolveEvent(uint256 eventId, uint256 winningIndex) external;
}

/// Sides, as the protocol's Side / TradeType codes.
library Sides {
    uint8 internal constant BUY_YES = 0;
    uint8 internal constant SELL_YES = 1;
    uint8 internal constant BUY_NO = 2;
    uint8 internal constant SELL_NO = 3;
    uint256 internal constant PRICE_UNIT = 1e6;
}

/// The CLOB as the router sees it.
interface IExchange {
    /// Fills up to `amountIn` (USDC for a BUY side, tokens for a SELL side) against resting orders
    /// at `limitPrice` or better, at most `maxFills` maker orders; pulls the input from the caller
    /// and sends the output to `recipient`. Returns (filled output, input spent).
    function fillMarketOrder(uint256 marketId, uint8 side, uint256 limitPrice, uint256 amountIn, address recipient, uint256 maxFills)
        external
        returns (uint256 filled, uint256 cost);
}
