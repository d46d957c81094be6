// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// Contracts the live devnet adds on top of the fixture's history (deployed by
/// `src/devnet/live-state.ts`); nothing in the fixture scenario uses them.

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

/// A minimal smart account: its owner executes calls through it; it holds ETH and tokens.
contract SmartAccount {
    address public immutable owner;

    constructor(address owner_) {
        owner = owner_;
    }

    receive() external payable {}

    function execute(address to, uint256 value, bytes calldata data) external returns (bytes memory result) {
        require(msg.sender == owner, "SmartAccount: owner");
        (bool ok, bytes memory out) = to.call{value: value}(data);
        require(ok, "SmartAccount: call failed");
        return out;
    }
}

/// Deterministic (CREATE2) smart-account factory: an owner's account address is known before
/// the account exists (counterfactual), so it can be funded first and deployed on first use.
contract SmartAccountFactory {
    event AccountCreated(address indexed account, address indexed owner, uint256 salt);

    function createAccount(address owner, uint256 salt) external returns (address account) {
        account = getAddress(owner, salt);
        if (account.code.length > 0) return account;
        new SmartAccount{salt: bytes32(salt)}(owner);
        emit AccountCreated(account, owner, salt);
    }

    function getAddress(address owner, uint256 salt) public view returns (address) {
        bytes32 codeHash = keccak256(abi.encodePacked(type(SmartAccount).creationCode, abi.encode(owner)));
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), bytes32(salt), codeHash)))));
    }
}
