// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import "./Events.sol";
import "./Interfaces.sol";
import {OutcomeToken} from "./Tokens.sol";

/// Roles and module ids (protocol-facts section 1).
library Roles {
    bytes32 internal constant DEFAULT_ADMIN = 0x00;
    bytes32 internal constant ADMIN = keccak256("predix.role.admin");
    bytes32 internal constant OPERATOR = keccak256("predix.role.operator");
    bytes32 internal constant PAUSER = keccak256("predix.role.pauser");
    bytes32 internal constant CUT_EXECUTOR = keccak256("predix.role.cut_executor");
    bytes32 internal constant CREATOR = keccak256("predix.role.creator");
    bytes32 internal constant MODULE_MARKET = keccak256("predix.module.market");
    bytes32 internal constant MODULE_DIAMOND = keccak256("predix.module.diamond");
}

/// The diamond's whole state, at one hashed slot shared by every facet (EIP-2535 storage).
library LibStore {
    struct Market {
        address yes;
        address no;
        address oracle;
        address creator;
        uint64 endTime;
        bool resolved;
        bool outcome;
        bool refund;
        bool swept;
        uint16 feeBps;
        uint256 eventId;
        uint256 collateral;
        uint256 resolvedAt;
    }

    struct Event {
        uint256[] marketIds;
        address oracle;
        uint64 endTime;
        bool resolved;
        bool refund;
    }

    struct State {
        mapping(bytes4 => address) facets;
        mapping(bytes32 => mapping(address => bool)) roles;
        mapping(bytes32 => bool) modulePaused;
        bool paused;
        bool deployedVariants;
        address usdc;
        address feeRecipient;
        uint16 defaultFeeBps;
        uint256 creationFee;
        uint256 emergencyDelay;
        uint256 sweepGrace;
        mapping(address => bool) oracles;
        uint256 marketCount;
        mapping(uint256 => Market) markets;
        uint256 eventCount;
        mapping(uint256 => Event) events;
    }

    bytes32 internal constant SLOT = keccak256("predix.devnet.diamond.storage");

    function s() internal pure returns (State storage st) {
        bytes32 slot = SLOT;
        assembly {
            st.slot := slot
        }
    }
}

/// Checks shared by the facets.
abstract contract FacetBase {
    error Unauthorized(bytes32 role, address account);
    error Paused();
    error UnknownMarket(uint256 marketId);

    uint16 internal constant MAX_FEE_BPS = 1500;

    modifier onlyRole(bytes32 role) {
        LibStore.State storage st = LibStore.s();
        if (!st.roles[role][msg.sender] && !st.roles[Roles.DEFAULT_ADMIN][msg.sender]) revert Unauthorized(role, msg.sender);
        _;
    }

    modifier whenActive() {
        LibStore.State storage st = LibStore.s();
        if (st.paused || st.modulePaused[Roles.MODULE_MARKET]) revert Paused();
        _;
    }

    function _market(uint256 marketId) internal view returns (LibStore.Market storage m) {
        m = LibStore.s().markets[marketId];
        if (m.yes == address(0)) revert UnknownMarket(marketId);
    }

    function _deployed() internal view returns (bool) {
        return LibStore.s().deployedVariants;
    }
}

/// EIP-2535 diamond: every call is routed by selector to a facet and runs in this storage.
contract Diamond {
    error NoFacet(bytes4 selector);

    constructor(address admin, address usdc, address feeRecipient, bool deployedVariants, uint256 emergencyDelay, uint256 sweepGrace) {
        LibStore.State storage st = LibStore.s();
        st.roles[Roles.DEFAULT_ADMIN][admin] = true;
        st.usdc = usdc;
        st.feeRecipient = feeRecipient;
        st.deployedVariants = deployedVariants;
        st.emergencyDelay = emergencyDelay;
        st.sweepGrace = sweepGrace;
        // The cut facet's own selector, so the first diamondCut (by the admin) can add the rest.
        st.facets[AdminFacet.diamondCut.selector] = address(new AdminFacet());
    }

    fallback() external payable {
        address facet = LibStore.s().facets[msg.sig];
        if (facet == address(0)) revert NoFacet(msg.sig);
        assembly {
            calldatacopy(0, 0, calldatasize())
            let ok := delegatecall(gas(), facet, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            switch ok
            case 0 { revert(0, returndatasize()) }
            default { return(0, returndatasize()) }
        }
    }

    receive() external payable {}
}

/// Access control, pauses, diamond cuts, oracle approvals and fee settings.
contract AdminFacet is FacetBase {
    error FeeTooHigh(uint256 bps);

    function diamondCut(Spec_diamondAdmin.FacetCut[] calldata cuts, address init, bytes calldata data) external onlyRole(Roles.CUT_EXECUTOR) {
        LibStore.State storage st = LibStore.s();
        for (uint256 i = 0; i < cuts.length; i++) {
            Spec_diamondAdmin.FacetCut calldata cut = cuts[i];
            for (uint256 j = 0; j < cut.functionSelectors.length; j++) {
                bytes4 selector = cut.functionSelectors[j];
                if (cut.action == 0) require(st.facets[selector] == address(0), "cut: exists");
                else require(st.facets[selector] != address(0), "cut: missing");
                st.facets[selector] = cut.action == 2 ? address(0) : cut.facetAddress;
            }
        }
        emit Spec_diamondAdmin.DiamondCut(cuts, init, data);
        if (init != address(0)) {
            (bool ok, ) = init.delegatecall(data);
            require(ok, "cut: init failed");
        }
    }

    function facetAddress(bytes4 selector) external view returns (address) {
        return LibStore.s().facets[selector];
    }

    function hasRole(bytes32 role, address account) external view returns (bool) {
        return LibStore.s().roles[role][account];
    }

    function grantRole(bytes32 role, address account) external onlyRole(Roles.DEFAULT_ADMIN) {
        LibStore.State storage st = LibStore.s();
        if (st.roles[role][account]) return;
        st.roles[role][account] = true;
        if (_deployed()) emit Deployed_diamondAdmin.RoleGranted(role, account, msg.sender);
        else emit Spec_diamondAdmin.RoleGranted(role, account, msg.sender);
    }

    function revokeRole(bytes32 role, address account) external onlyRole(Roles.DEFAULT_ADMIN) {
        LibStore.State storage st = LibStore.s();
        if (!st.roles[role][account]) return;
        st.roles[role][account] = false;
        if (_deployed()) emit Deployed_diamondAdmin.RoleRevoked(role, account, msg.sender);
        else emit Spec_diamondAdmin.RoleRevoked(role, account, msg.sender);
    }

    function pause() external onlyRole(Roles.PAUSER) {
        LibStore.s().paused = true;
        emit Spec_diamondAdmin.GlobalPaused(msg.sender);
    }

    function unpause() external onlyRole(Roles.PAUSER) {
        LibStore.s().paused = false;
        emit Deployed_diamondAdmin.GlobalUnpaused(msg.sender);
    }

    function pauseModule(bytes32 moduleId) external onlyRole(Roles.PAUSER) {
        LibStore.s().modulePaused[moduleId] = true;
        if (_deployed()) emit Deployed_diamondAdmin.ModulePaused(moduleId, msg.sender);
        else emit Spec_diamondAdmin.ModulePaused(moduleId, msg.sender);
    }

    function unpauseModule(bytes32 moduleId) external onlyRole(Roles.PAUSER) {
        LibStore.s().modulePaused[moduleId] = false;
        emit Deployed_diamondAdmin.ModuleUnpaused(moduleId, msg.sender);
    }

    function isPaused() external view returns (bool global, bool market) {
        LibStore.State storage st = LibStore.s();
        return (st.paused, st.modulePaused[Roles.MODULE_MARKET]);
    }

    function approveOracle(address oracle) external onlyRole(Roles.ADMIN) {
        LibStore.s().oracles[oracle] = true;
        emit Deployed_marketFacet.OracleApproved(oracle);
    }

    function revokeOracle(address oracle) external onlyRole(Roles.ADMIN) {
        LibStore.s().oracles[oracle] = false;
        emit Deployed_marketFacet.OracleRevoked(oracle);
    }

    function setDefaultRedemptionFee(uint16 bps) external onlyRole(Roles.ADMIN) {
        if (bps > MAX_FEE_BPS) revert FeeTooHigh(bps);
        LibStore.State storage st = LibStore.s();
        emit Deployed_marketFacet.DefaultRedemptionFeeUpdated(st.defaultFeeBps, bps);
        st.defaultFeeBps = bps;
    }

    /// overridden == false returns the market to the default fee (reported as bps 0).
    function setMarketRedemptionFee(uint256 marketId, uint16 bps, bool overridden) external onlyRole(Roles.ADMIN) {
        if (bps > MAX_FEE_BPS) revert FeeTooHigh(bps);
        LibStore.Market storage m = _market(marketId);
        m.feeBps = overridden ? bps : LibStore.s().defaultFeeBps;
        emit Deployed_marketFacet.PerMarketRedemptionFeeUpdated(marketId, overridden ? bps : 0, overridden);
    }

    function setMarketCreationFee(uint256 fee) external onlyRole(Roles.ADMIN) {
        LibStore.State storage st = LibStore.s();
        emit Deployed_marketFacet.MarketCreationFeeUpdated(st.creationFee, fee);
        st.creationFee = fee;
    }

    function setFeeRecipient(address recipient) external onlyRole(Roles.ADMIN) {
        require(recipient != address(0), "fee recipient: zero");
        LibStore.State storage st = LibStore.s();
        emit Deployed_marketFacet.FeeRecipientUpdated(st.feeRecipient, recipient);
        st.feeRecipient = recipient;
    }

    function usdc() external view returns (address) {
        return LibStore.s().usdc;
    }

    function feeRecipient() external view returns (address) {
        return LibStore.s().feeRecipient;
    }

    function deployedVariants() external view returns (bool) {
        return LibStore.s().deployedVariants;
    }
}

/// Markets: creation, split and merge, resolution, redemption, refunds, sweep.
contract MarketFacet is FacetBase {
    error NotOracle(address caller);
    error MarketClosed(uint256 marketId);
    error AlreadyResolved(uint256 marketId);
    error TooEarly(uint256 readyAt);
    error NotResolved(uint256 marketId);
    error NotRefundable(uint256 marketId);
    error NothingToClaim();

    function marketCount() external view returns (uint256) {
        return LibStore.s().marketCount;
    }

    function createMarket(string calldata question, uint256 endTime, address oracle) external whenActive onlyRole(Roles.CREATOR) returns (uint256) {
        require(LibStore.s().oracles[oracle], "oracle not approved");
        require(endTime > block.timestamp, "end time passed");
        return _create(question, endTime, oracle, 0, msg.sender);
    }

    /// The event facet's way in (a call from the diamond to itself): children have no oracle.
    function createChildMarket(string calldata question, uint256 endTime, uint256 eventId, address creator) external returns (uint256) {
        require(msg.sender == address(this), "diamond only");
        return _create(question, endTime, address(0), eventId, creator);
    }

    function _create(string calldata question, uint256 endTime, address oracle, uint256 eventId, address creator) internal returns (uint256 marketId) {
        LibStore.State storage st = LibStore.s();
        marketId = ++st.marketCount;
        LibStore.Market storage m = st.markets[marketId];
        _deployTokens(m, marketId);
        m.oracle = oracle;
        m.creator = creator;
        m.endTime = uint64(endTime);
        m.feeBps = st.defaultFeeBps;
        m.eventId = eventId;
        if (st.creationFee > 0) IERC20(st.usdc).transferFrom(creator, st.feeRecipient, st.creationFee);
        _announce(m, marketId, question);
    }

    function _deployTokens(LibStore.Market storage m, uint256 marketId) internal {
        string memory id = _decimal(marketId);
        m.yes = address(new OutcomeToken(string.concat("PrediX YES #", id), string.concat("pxY-", id), marketId));
        m.no = address(new OutcomeToken(string.concat("PrediX NO #", id), string.concat("pxN-", id), marketId));
    }

    function _announce(LibStore.Market storage m, uint256 marketId, string calldata question) internal {
        emit Spec_marketFacet.MarketCreated(marketId, m.creator, m.oracle, m.yes, m.no, m.endTime, question);
    }

    function marketTokens(uint256 marketId) external view returns (address yes, address no) {
        LibStore.Market storage m = _market(marketId);
        return (m.yes, m.no);
    }

    function marketEndTime(uint256 marketId) external view returns (uint256) {
        return _market(marketId).endTime;
    }

    function getMarket(uint256 marketId) external view returns (LibStore.Market memory) {
        return _market(marketId);
    }

    function isTradable(uint256 marketId) public view returns (bool) {
        LibStore.State storage st = LibStore.s();
        LibStore.Market storage m = st.markets[marketId];
        return m.yes != address(0) && !m.resolved && !m.refund && block.timestamp < m.endTime && !st.paused && !st.modulePaused[Roles.MODULE_MARKET];
    }

    function splitPosition(uint256 marketId, uint256 amount) external whenActive {
        LibStore.Market storage m = _market(marketId);
        if (m.resolved || m.refund || block.timestamp >= m.endTime) revert MarketClosed(marketId);
        require(amount > 0, "zero amount");
        IERC20(LibStore.s().usdc).transferFrom(msg.sender, address(this), amount);
        m.collateral += amount;
        OutcomeToken(m.yes).mint(msg.sender, amount);
        OutcomeToken(m.no).mint(msg.sender, amount);
        emit Spec_marketFacet.PositionSplit(marketId, msg.sender, amount);
    }

    function mergePositions(uint256 marketId, uint256 amount) external whenActive {
        LibStore.Market storage m = _market(marketId);
        if (m.resolved || m.refund) revert MarketClosed(marketId);
        require(amount > 0, "zero amount");
        OutcomeToken(m.yes).burn(msg.sender, amount);
        OutcomeToken(m.no).burn(msg.sender, amount);
        m.collateral -= amount;
        IERC20(LibStore.s().usdc).transfer(msg.sender, amount);
        emit Spec_marketFacet.PositionMerged(marketId, msg.sender, amount);
    }

    /// Called by the market's oracle (approved), or by the diamond itself for event children.
    function resolveMarket(uint256 marketId, bool outcome) external {
        LibStore.State storage st = LibStore.s();
        LibStore.Market storage m = _market(marketId);
        if (msg.sender != address(this) && (msg.sender != m.oracle || !st.oracles[msg.sender])) revert NotOracle(msg.sender);
        _resolve(m, marketId, outcome);
        emit Spec_marketFacet.MarketResolved(marketId, outcome, msg.sender);
    }

    /// Admin's way out when the oracle never answers: only `emergencyDelay` after the end time.
    function emergencyResolve(uint256 marketId, bool outcome) external onlyRole(Roles.ADMIN) {
        LibStore.Market storage m = _market(marketId);
        uint256 readyAt = uint256(m.endTime) + LibStore.s().emergencyDelay;
        if (block.timestamp < readyAt) revert TooEarly(readyAt);
        _resolve(m, marketId, outcome);
        emit Spec_marketFacet.MarketEmergencyResolved(marketId, outcome, msg.sender);
    }

    function _resolve(LibStore.Market storage m, uint256 marketId, bool outcome) internal {
        if (m.resolved) revert AlreadyResolved(marketId);
        if (m.refund) revert MarketClosed(marketId);
        m.resolved = true;
        m.outcome = outcome;
        m.resolvedAt = block.timestamp;
    }

    /// Burns the caller's whole YES and NO balances; pays the winning amount less the fee.
    function redeem(uint256 marketId) external whenActive {
        LibStore.State storage st = LibStore.s();
        LibStore.Market storage m = _market(marketId);
        if (!m.resolved) revert NotResolved(marketId);
        (address win, address lose) = m.outcome ? (m.yes, m.no) : (m.no, m.yes);
        uint256 winning = IERC20(win).balanceOf(msg.sender);
        uint256 losing = IERC20(lose).balanceOf(msg.sender);
        if (winning + losing == 0) revert NothingToClaim();
        if (winning > 0) OutcomeToken(win).burn(msg.sender, winning);
        if (losing > 0) OutcomeToken(lose).burn(msg.sender, losing);
        uint256 fee = (winning * m.feeBps) / 10_000;
        uint256 payout = winning - fee;
        m.collateral -= winning;
        if (fee > 0) IERC20(st.usdc).transfer(st.feeRecipient, fee);
        if (payout > 0) IERC20(st.usdc).transfer(msg.sender, payout);
        emit Spec_marketFacet.TokensRedeemed(marketId, msg.sender, winning, losing, fee, payout);
    }

    function enableRefundMode(uint256 marketId) external onlyRole(Roles.ADMIN) {
        _enableRefund(marketId, msg.sender);
    }

    /// Shared with the event facet for its children.
    function enableRefundModeFor(uint256 marketId, address enabler) external {
        require(msg.sender == address(this), "diamond only");
        _enableRefund(marketId, enabler);
    }

    function _enableRefund(uint256 marketId, address enabler) internal {
        LibStore.Market storage m = _market(marketId);
        if (m.resolved) revert AlreadyResolved(marketId);
        if (m.refund) revert MarketClosed(marketId);
        m.refund = true;
        emit Spec_marketFacet.RefundModeEnabled(marketId, enabler);
    }

    /// Refund mode: burns equal YES and NO (the smaller balance) and returns that much USDC.
    function refund(uint256 marketId) external {
        LibStore.Market storage m = _market(marketId);
        if (!m.refund) revert NotRefundable(marketId);
        uint256 yes = IERC20(m.yes).balanceOf(msg.sender);
        uint256 no = IERC20(m.no).balanceOf(msg.sender);
        uint256 amount = yes < no ? yes : no;
        if (amount == 0) revert NothingToClaim();
        OutcomeToken(m.yes).burn(msg.sender, amount);
        OutcomeToken(m.no).burn(msg.sender, amount);
        m.collateral -= amount;
        IERC20(LibStore.s().usdc).transfer(msg.sender, amount);
        emit Spec_marketFacet.MarketRefunded(marketId, msg.sender, amount, amount, amount);
    }

    /// After the grace period, collateral no outstanding winning token can claim goes to the fee recipient.
    function sweepUnclaimed(uint256 marketId) external onlyRole(Roles.ADMIN) {
        LibStore.State storage st = LibStore.s();
        LibStore.Market storage m = _market(marketId);
        if (!m.resolved) revert NotResolved(marketId);
        uint256 readyAt = m.resolvedAt + st.sweepGrace;
        if (block.timestamp < readyAt) revert TooEarly(readyAt);
        require(!m.swept, "swept");
        m.swept = true;
        // Every outstanding winning token stays redeemable; only the rest is swept.
        uint256 outstanding = OutcomeToken(m.outcome ? m.yes : m.no).totalSupply();
        uint256 amount = m.collateral - outstanding;
        m.collateral -= amount;
        if (amount > 0) IERC20(st.usdc).transfer(st.feeRecipient, amount);
        emit Deployed_marketFacet.UnclaimedSwept(marketId, st.feeRecipient, amount);
    }

    function _decimal(uint256 value) internal pure returns (string memory) {
        if (value == 0) return "0";
        bytes memory digits = new bytes(78);
        uint256 length = 0;
        while (value > 0) {
            digits[77 - length++] = bytes1(uint8(48 + (value % 10)));
            value /= 10;
        }
        bytes memory out = new bytes(length);
        for (uint256 i = 0; i < length; i++) out[i] = digits[78 - length + i];
        return string(out);
    }
}

/// Multi-outcome events: a group of child markets of which exactly one resolves YES.
contract EventFacet is FacetBase {
    error NotEventOracle(address caller);

    function eventCount() external view returns (uint256) {
        return LibStore.s().eventCount;
    }

    function eventMarkets(uint256 eventId) external view returns (uint256[] memory) {
        return LibStore.s().events[eventId].marketIds;
    }

    function createEvent(string calldata name, string[] calldata questions, uint256 endTime, address oracle) external whenActive onlyRole(Roles.CREATOR) returns (uint256 eventId) {
        LibStore.State storage st = LibStore.s();
        require(questions.length >= 2 && questions.length <= 50, "children: 2..50");
        require(st.oracles[oracle], "oracle not approved");
        require(endTime > block.timestamp, "end time passed");
        eventId = ++st.eventCount;
        LibStore.Event storage e = st.events[eventId];
        e.oracle = oracle;
        e.endTime = uint64(endTime);
        for (uint256 i = 0; i < questions.length; i++) {
            e.marketIds.push(MarketFacet(address(this)).createChildMarket(questions[i], endTime, eventId, msg.sender));
        }
        if (_deployed()) emit Deployed_eventFacet.EventCreated(eventId, msg.sender, endTime, name, e.marketIds);
        else emit Spec_eventFacet.EventCreated(eventId, msg.sender, endTime, name, e.marketIds, oracle);
    }

    /// Resolves every child: the winner YES, the rest NO.
    function resolveEvent(uint256 eventId, uint256 winningIndex) external {
        LibStore.Event storage e = LibStore.s().events[eventId];
        if (msg.sender != e.oracle || !LibStore.s().oracles[msg.sender]) revert NotEventOracle(msg.sender);
        require(!e.resolved && !e.refund, "event closed");
        require(winningIndex < e.marketIds.length, "winning index");
        e.resolved = true;
        for (uint256 i = 0; i < e.marketIds.length; i++) {
            MarketFacet(address(this)).resolveMarket(e.marketIds[i], i == winningIndex);
        }
        if (_deployed()) emit Deployed_eventFacet.EventResolved(eventId, winningIndex, msg.sender);
        else emit Spec_eventFacet.EventResolved(eventId, msg.sender);
    }

    function enableEventRefundMode(uint256 eventId) external onlyRole(Roles.ADMIN) {
        LibStore.Event storage e = LibStore.s().events[eventId];
        require(e.marketIds.length > 0 && !e.resolved && !e.refund, "event closed");
        e.refund = true;
        for (uint256 i = 0; i < e.marketIds.length; i++) {
            MarketFacet(address(this)).enableRefundModeFor(e.marketIds[i], msg.sender);
        }
        if (_deployed()) emit Deployed_eventFacet.EventRefundModeEnabled(eventId, msg.sender);
        else emit Spec_eventFacet.EventRefundModeEnabled(eventId);
    }
}
