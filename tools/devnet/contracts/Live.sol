// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// Contracts the live devnet adds on top of the fixture's history (deployed by
/// `src/devnet/live-state.ts`); nothing in the fixture scenario uses them. The account
/// abstraction contracts the live devnet adds are in Aa.sol.

interface ITransferFrom {
    function transferFrom(address from, address to, uint256 value) external returns (bool);
}

/// Sends a faucet drip as ONE transaction: the caller's tokens (which the caller approved to
/// this contract) and the ETH sent along, both to `to`. It only ever moves the caller's own
/// funds, so it needs no owner.
contract FaucetDispenser {
    event Dispensed(address indexed from, address indexed to, address token, uint256 tokenAmount, uint256 ethAmount);

    function dispense(address token, address to, uint256 tokenAmount) external payable {
        require(ITransferFrom(token).transferFrom(msg.sender, to, tokenAmount), "FaucetDispenser: token transfer");
        (bool sent, ) = payable(to).call{value: msg.value}("");
        require(sent, "FaucetDispenser: eth transfer");
        emit Dispensed(msg.sender, to, token, tokenAmount, msg.value);
    }
}
