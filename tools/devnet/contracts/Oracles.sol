// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import "./Events.sol";
import "./Interfaces.sol";

/// Human-reported outcomes with a challenge window: a reporter proposes, the admin may revoke
/// within `challengeDelay` (and later reopen the market for a new report), anyone finalizes
/// after the window, which resolves the market (or event) on the diamond.
contract ManualOracle {
    enum Status { NONE, REPORTED, REVOKED, FINALIZED }

    struct Report {
        Status status;
        uint256 value; // outcome (0/1) for a market, winning index for an event
        uint256 reportedAt;
    }

    IDiamond public immutable diamond;
    address public immutable admin;
    uint256 public challengeDelay;
    mapping(address => bool) public reporters;
    mapping(uint256 => Report) public marketReports;
    mapping(uint256 => Report) public eventReports;

    error Unauthorized(address caller);
    error BadStatus(Status status);
    error ChallengeWindowOpen(uint256 until);

    constructor(IDiamond diamond_, address admin_, uint256 challengeDelay_) {
        diamond = diamond_;
        admin = admin_;
        challengeDelay = challengeDelay_;
    }

    modifier onlyAdmin() {
        if (msg.sender != admin) revert Unauthorized(msg.sender);
        _;
    }

    function setReporter(address reporter, bool allowed) external onlyAdmin {
        reporters[reporter] = allowed;
    }

    function setChallengeDelay(uint256 delay) external onlyAdmin {
        emit Spec_manualOracle.ChallengeDelayUpdated(challengeDelay, delay);
        challengeDelay = delay;
    }

    function report(uint256 marketId, bool outcome) external {
        _propose(marketReports[marketId], outcome ? 1 : 0);
        emit Spec_manualOracle.OutcomeReported(marketId, outcome, msg.sender);
    }

    function revoke(uint256 marketId) external onlyAdmin {
        _revoke(marketReports[marketId]);
        emit Spec_manualOracle.OutcomeRevoked(marketId, msg.sender);
    }

    function reopen(uint256 marketId) external onlyAdmin {
        _reopen(marketReports[marketId]);
        emit Spec_manualOracle.ReportReopened(marketId, msg.sender);
    }

    function finalize(uint256 marketId) external {
        uint256 outcome = _finalize(marketReports[marketId]);
        diamond.resolveMarket(marketId, outcome == 1);
    }

    function reportEvent(uint256 eventId, uint256 winningIndex) external {
        _propose(eventReports[eventId], winningIndex);
        emit Spec_manualOracle.EventOutcomeReported(eventId, winningIndex, msg.sender);
    }

    function revokeEvent(uint256 eventId) external onlyAdmin {
        _revoke(eventReports[eventId]);
        emit Spec_manualOracle.EventOutcomeRevoked(eventId, msg.sender);
    }

    function reopenEvent(uint256 eventId) external onlyAdmin {
        _reopen(eventReports[eventId]);
        emit Spec_manualOracle.EventReportReopened(eventId, msg.sender);
    }

    function finalizeEvent(uint256 eventId) external {
        uint256 winningIndex = _finalize(eventReports[eventId]);
        diamond.resolveEvent(eventId, winningIndex);
    }

    function _propose(Report storage r, uint256 value) internal {
        if (!reporters[msg.sender]) revert Unauthorized(msg.sender);
        if (r.status != Status.NONE) revert BadStatus(r.status);
        r.status = Status.REPORTED;
        r.value = value;
        r.reportedAt = block.timestamp;
    }

    function _revoke(Report storage r) internal {
        if (r.status != Status.REPORTED) revert BadStatus(r.status);
        r.status = Status.REVOKED;
    }

    function _reopen(Report storage r) internal {
        if (r.status != Status.REVOKED) revert BadStatus(r.status);
        r.status = Status.NONE;
    }

    function _finalize(Report storage r) internal returns (uint256) {
        if (r.status != Status.REPORTED) revert BadStatus(r.status);
        uint256 until = r.reportedAt + challengeDelay;
        if (block.timestamp < until) revert ChallengeWindowOpen(until);
        r.status = Status.FINALIZED;
        return r.value;
    }
}

/// A Chainlink-shaped price feed whose answer its owner sets (the devnet's stand-in for a real feed).
contract PriceFeed {
    address public immutable owner;
    uint8 public immutable decimals;
    int256 public latestAnswer;
    uint256 public updatedAt;
    uint80 public roundId;

    constructor(uint8 decimals_, int256 answer) {
        owner = msg.sender;
        decimals = decimals_;
        _set(answer);
    }

    function setAnswer(int256 answer) external {
        require(msg.sender == owner, "owner");
        _set(answer);
    }

    function _set(int256 answer) internal {
        latestAnswer = answer;
        updatedAt = block.timestamp;
        roundId++;
    }

    function latestRoundData() external view returns (uint80, int256, uint256, uint256, uint80) {
        return (roundId, latestAnswer, updatedAt, updatedAt, roundId);
    }
}

/// Resolves a market from a price feed at a snapshot time: YES when price >= threshold (gte) or
/// price < threshold (!gte).
contract PriceFeedOracle {
    struct Registration {
        PriceFeed feed;
        int256 threshold;
        bool gte;
        uint64 snapshotAt;
        bool resolved;
    }

    IDiamond public immutable diamond;
    address public immutable registrar;
    mapping(uint256 => Registration) public registrations;

    error Unauthorized(address caller);
    error NotRegistered(uint256 marketId);
    error TooEarly(uint64 snapshotAt);

    constructor(IDiamond diamond_, address registrar_) {
        diamond = diamond_;
        registrar = registrar_;
    }

    function register(uint256 marketId, PriceFeed feed, int256 threshold, bool gte, uint64 snapshotAt) external {
        if (msg.sender != registrar) revert Unauthorized(msg.sender);
        require(address(registrations[marketId].feed) == address(0), "registered");
        registrations[marketId] = Registration(feed, threshold, gte, snapshotAt, false);
        emit Spec_priceFeedOracle.MarketRegistered(marketId, address(feed), threshold, gte, snapshotAt);
    }

    function unregister(uint256 marketId) external {
        if (msg.sender != registrar) revert Unauthorized(msg.sender);
        Registration storage r = registrations[marketId];
        if (address(r.feed) == address(0) || r.resolved) revert NotRegistered(marketId);
        delete registrations[marketId];
        emit Spec_priceFeedOracle.MarketUnregistered(marketId);
    }

    /// Anyone, once the snapshot time has passed.
    function resolve(uint256 marketId) external {
        Registration storage r = registrations[marketId];
        if (address(r.feed) == address(0) || r.resolved) revert NotRegistered(marketId);
        if (block.timestamp < r.snapshotAt) revert TooEarly(r.snapshotAt);
        r.resolved = true;
        int256 price = r.feed.latestAnswer();
        bool outcome = r.gte ? price >= r.threshold : price < r.threshold;
        emit Spec_priceFeedOracle.MarketResolved(marketId, price, outcome);
        diamond.resolveMarket(marketId, outcome);
    }
}
