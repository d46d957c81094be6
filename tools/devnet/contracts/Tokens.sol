// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// Minimal ERC-20 with 6 decimals. Transfer and Approval carry the standard signatures, which
/// are the outcome-token events the indexer reads.
abstract contract ERC20 {
    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    string public name;
    string public symbol;
    uint8 public constant decimals = 6;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    constructor(string memory name_, string memory symbol_) {
        name = name_;
        symbol = symbol_;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _move(msg.sender, to, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            require(allowed >= value, "ERC20: allowance");
            allowance[from][msg.sender] = allowed - value;
        }
        _move(from, to, value);
        return true;
    }

    function _move(address from, address to, uint256 value) internal {
        require(to != address(0), "ERC20: to zero");
        require(balanceOf[from] >= value, "ERC20: balance");
        balanceOf[from] -= value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }

    function _mint(address to, uint256 value) internal {
        totalSupply += value;
        balanceOf[to] += value;
        emit Transfer(address(0), to, value);
    }

    function _burn(address from, uint256 value) internal {
        require(balanceOf[from] >= value, "ERC20: burn");
        balanceOf[from] -= value;
        totalSupply -= value;
        emit Transfer(from, address(0), value);
    }
}

/// The devnet's collateral: USDC-like, minted by its owner and by the minters it names (the faucet).
contract TestUsdc is ERC20 {
    address public immutable owner;
    mapping(address => bool) public minters;

    constructor() ERC20("Test USD Coin", "USDC") {
        owner = msg.sender;
    }

    function setMinter(address minter, bool allowed) external {
        require(msg.sender == owner, "TestUsdc: owner");
        minters[minter] = allowed;
    }

    function mint(address to, uint256 value) external {
        require(msg.sender == owner || minters[msg.sender], "TestUsdc: minter");
        _mint(to, value);
    }
}

/// One side (YES or NO) of one market. Only the diamond mints and burns (protocol invariant).
contract OutcomeToken is ERC20 {
    address public immutable diamond;
    uint256 public immutable marketId;

    constructor(string memory name_, string memory symbol_, uint256 marketId_) ERC20(name_, symbol_) {
        diamond = msg.sender;
        marketId = marketId_;
    }

    function mint(address to, uint256 value) external {
        require(msg.sender == diamond, "OutcomeToken: diamond");
        _mint(to, value);
    }

    function burn(address from, uint256 value) external {
        require(msg.sender == diamond, "OutcomeToken: diamond");
        _burn(from, value);
    }
}

/// 10,000 USDC per address, once, plus a little ETH for gas.
contract Faucet {
    uint256 public constant CLAIM_AMOUNT = 10_000e6;
    uint256 public constant GAS_ALLOWANCE = 0.05 ether;
    TestUsdc public immutable usdc;
    mapping(address => bool) public claimed;

    event Claimed(address indexed account, uint256 amount);

    constructor(TestUsdc usdc_) payable {
        usdc = usdc_;
    }

    receive() external payable {}

    function claim() external {
        claimFor(msg.sender);
    }

    function claimFor(address account) public {
        require(!claimed[account], "Faucet: already claimed");
        claimed[account] = true;
        usdc.mint(account, CLAIM_AMOUNT);
        if (address(this).balance >= GAS_ALLOWANCE) {
            (bool sent, ) = account.call{value: GAS_ALLOWANCE}("");
            sent; // an account that refuses ETH still gets its USDC
        }
        emit Claimed(account, CLAIM_AMOUNT);
    }
}
