// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import "./Events.sol";
import "./Interfaces.sol";

/// The devnet's central limit order book for binary markets.
///
/// Book: per (market, side, price tick) a FIFO queue (doubly linked list of order ids) and, per
/// (market, side), a 99-bit bitmap of the non-empty ticks (bit i = price (i + 1) * 10_000).
/// A taker matches, best effective price first and FIFO within a tick, against
///   COMPLEMENTARY (0): the opposite side of the same token (BUY_YES vs SELL_YES, ...);
///   MINT (1):          a BUY taker vs a BUY maker of the other token; the exchange splits USDC;
///   MERGE (2):         a SELL taker vs a SELL maker of the other token; the exchange merges.
/// A synthetic maker at price p is worth 1e6 - p to the taker; on a tie COMPLEMENTARY wins.
///
/// Solvency invariant (holds after every external call):
///   USDC.balanceOf(this) == sum of depositLocked over live BUY orders, and
///   YES/NO.balanceOf(this) == sum of depositLocked over live SELL_YES/SELL_NO orders.
/// A BUY order always locks exactly floor(remaining * price / 1e6) USDC; a SELL order locks
/// `remaining` tokens. Every fill moves out exactly what it releases from the locks.
contract Exchange is IExchange {
    struct Order {
        address owner;
        uint8 side;
        bool cancelled;
        uint256 marketId;
        uint256 price;
        uint256 amount;
        uint256 filled;
        uint256 depositLocked;
        bytes32 builder;
    }

    /// One price tick of one side: FIFO queue of live orders and the sum of their remaining amounts.
    struct Level {
        bytes32 head;
        bytes32 tail;
        uint256 total;
        uint256 count;
    }

    struct Link {
        bytes32 prev;
        bytes32 next;
    }

    /// The taker of one placeOrder or fillMarketOrder call, while it matches.
    struct Taker {
        uint256 marketId;
        uint8 side;
        uint256 limit; // price limit on the taker's own side
        bytes32 orderId; // 0 for a market order
        bytes32 builder;
        address recipient; // gets the output (the order owner for a limit order)
        uint256 remaining; // limit order or market SELL: shares left; market BUY: USDC budget left
        uint256 out; // output accumulated: tokens for BUY, USDC for SELL (limit: plus refunds)
        uint256 spent; // market order: input spent; BUY limit order: USDC refund (price improvement)
        uint256 fills;
        uint256 maxFills;
        address yes;
        address no;
    }

    uint256 public constant PRICE_UNIT = 1e6;
    uint256 public constant PRICE_TICK = 10_000;
    uint256 public constant MAX_PRICE_INDEX = 98;
    uint256 public constant MIN_ORDER_AMOUNT = 1e6;
    uint256 public constant MAX_FILLS_PER_PLACE = 20;
    uint256 public constant DEFAULT_MAX_FILLS = 10;
    uint256 public constant MAX_QUEUE_DEPTH_PER_PRICE = 200;
    /// MINT amounts that would fall 1-2 raw USDC short of the split (floor rounding of both
    /// locks) are rounded down to this grain, where both locks divide exactly.
    uint256 internal constant MINT_GRAIN = 100;

    uint8 internal constant COMPLEMENTARY = 0;
    uint8 internal constant MINT = 1;
    uint8 internal constant MERGE = 2;

    IDiamond public immutable diamond;
    IERC20 public immutable usdc;
    bool public immutable deployedVariants;
    address public immutable admin;
    /// While paused nothing new trades (orders, market fills); cancelling stays open.
    bool public paused;
    uint256 public nonce;

    mapping(bytes32 => Order) internal orders;
    mapping(bytes32 => Link) internal links;
    mapping(uint256 => mapping(uint8 => mapping(uint256 => Level))) internal levels; // market, side, tick index
    mapping(uint256 => mapping(uint8 => uint256)) internal bitmaps; // market, side

    error InvalidPrice(uint256 price);
    error InvalidSide(uint8 side);
    error AmountTooSmall(uint256 amount);
    error MarketNotTradable(uint256 marketId);
    error NotOrderOwner(bytes32 orderId);
    error OrderNotLive(bytes32 orderId);
    error QueueFull(uint256 marketId, uint8 side, uint256 price);
    error TransferFailed();
    error ExchangePaused();
    error NotAdmin(address caller);

    constructor(IDiamond diamond_) {
        diamond = diamond_;
        usdc = IERC20(diamond_.usdc());
        deployedVariants = diamond_.deployedVariants();
        admin = msg.sender;
        usdc.approve(address(diamond_), type(uint256).max); // MINT: the diamond pulls the split's USDC
    }

    /// Emits the deployed exchange's Paused/Unpaused(address indexed account) on every call
    /// (OpenZeppelin Pausable's events, account indexed as protocol-facts section 7 has them).
    function setPaused(bool paused_) external {
        if (msg.sender != admin) revert NotAdmin(msg.sender);
        paused = paused_;
        if (paused_) emit Deployed_exchange.Paused(msg.sender);
        else emit Deployed_exchange.Unpaused(msg.sender);
    }

    // ---------------------------------------------------------------- limit orders

    function placeOrder(uint256 marketId, uint8 side, uint256 price, uint256 amount, bytes32 builder)
        external
        returns (bytes32 orderId)
    {
        if (paused) revert ExchangePaused();
        if (side > Sides.SELL_NO) revert InvalidSide(side);
        if (price == 0 || price % PRICE_TICK != 0 || price >= PRICE_UNIT) revert InvalidPrice(price);
        if (amount < MIN_ORDER_AMOUNT) revert AmountTooSmall(amount);
        if (!diamond.isTradable(marketId)) revert MarketNotTradable(marketId);

        orderId = keccak256(abi.encode(msg.sender, nonce++));
        Taker memory t = _taker(marketId, side, price, msg.sender, MAX_FILLS_PER_PLACE);
        t.orderId = orderId;
        t.builder = builder;
        t.remaining = amount;

        uint256 lock = _isBuy(side) ? (amount * price) / PRICE_UNIT : amount;
        orders[orderId] = Order(msg.sender, side, false, marketId, price, amount, 0, lock, builder);
        _pull(_isBuy(side) ? address(usdc) : _token(t, side), msg.sender, address(this), lock);

        _match(t);
        if (t.out > 0) _push(_isBuy(side) ? _token(t, side) : address(usdc), msg.sender, t.out);
        if (t.spent > 0) _push(address(usdc), msg.sender, t.spent); // BUY: lock released beyond the maker prices

        // matched-before-placed, as the deployed exchange orders them; the remainder then rests
        if (deployedVariants) emit Deployed_exchange.OrderPlaced(orderId, marketId, msg.sender, side, price, amount);
        else emit Spec_exchange.OrderPlaced(orderId, marketId, msg.sender, side, price, amount, builder);

        if (t.remaining > 0) _enqueue(orderId, orders[orderId]);
    }

    function cancelOrder(bytes32 orderId) external {
        Order storage o = orders[orderId];
        if (o.owner != msg.sender) revert NotOrderOwner(orderId);
        if (o.cancelled || o.filled == o.amount) revert OrderNotLive(orderId);
        o.cancelled = true;
        uint256 refund = o.depositLocked;
        o.depositLocked = 0;
        _unlink(orderId, o, o.amount - o.filled);
        address token = address(usdc);
        if (!_isBuy(o.side)) {
            (address yes, address no) = diamond.marketTokens(o.marketId);
            token = o.side == Sides.SELL_YES ? yes : no;
        }
        _push(token, msg.sender, refund);
        emit Spec_exchange.OrderCancelled(orderId);
    }

    // ---------------------------------------------------------------- market orders (router)

    /// @inheritdoc IExchange
    function fillMarketOrder(uint256 marketId, uint8 side, uint256 limitPrice, uint256 amountIn, address recipient, uint256 maxFills)
        external
        returns (uint256 filled, uint256 cost)
    {
        if (paused) revert ExchangePaused();
        if (side > Sides.SELL_NO) revert InvalidSide(side);
        if (!diamond.isTradable(marketId)) revert MarketNotTradable(marketId);
        if (maxFills == 0) maxFills = DEFAULT_MAX_FILLS;
        if (maxFills > MAX_FILLS_PER_PLACE) maxFills = MAX_FILLS_PER_PLACE;

        Taker memory t = _taker(marketId, side, limitPrice, recipient, maxFills);
        t.remaining = amountIn;
        _match(t);
        if (t.fills == 0) return (0, 0);
        if (t.out > 0) _push(_isBuy(side) ? _token(t, side) : address(usdc), recipient, t.out);
        emit Spec_exchange.TakerFilled(marketId, msg.sender, recipient, side, t.out, t.spent, t.fills);
        return (t.out, t.spent);
    }

    // ---------------------------------------------------------------- views

    function getOrder(bytes32 orderId) external view returns (Order memory) {
        return orders[orderId];
    }

    /// Raw book only (no synthetic prices); 0 = empty.
    function bestPrices(uint256 marketId)
        external
        view
        returns (uint256 bestBidYes, uint256 bestAskYes, uint256 bestBidNo, uint256 bestAskNo)
    {
        bestBidYes = _best(marketId, Sides.BUY_YES);
        bestAskYes = _best(marketId, Sides.SELL_YES);
        bestBidNo = _best(marketId, Sides.BUY_NO);
        bestAskNo = _best(marketId, Sides.SELL_NO);
    }

    /// Sum of the remaining amounts resting at (market, side, price).
    function depthAt(uint256 marketId, uint8 side, uint256 price) external view returns (uint256) {
        if (price == 0 || price % PRICE_TICK != 0 || price >= PRICE_UNIT) return 0;
        return levels[marketId][side][price / PRICE_TICK - 1].total;
    }

    // ---------------------------------------------------------------- matching

    function _taker(uint256 marketId, uint8 side, uint256 limit, address recipient, uint256 maxFills)
        internal
        view
        returns (Taker memory t)
    {
        t.marketId = marketId;
        t.side = side;
        t.limit = limit;
        t.recipient = recipient;
        t.maxFills = maxFills;
        (t.yes, t.no) = diamond.marketTokens(marketId);
    }

    /// Fills the taker against the book until it is done, the book has nothing within its limit,
    /// or maxFills fills happened. For a limit taker `t.spent` collects its USDC refunds.
    function _match(Taker memory t) internal {
        while (t.remaining > 0 && t.fills < t.maxFills) {
            (bytes32 makerId, uint8 kind) = _nextMaker(t);
            if (makerId == bytes32(0)) return;
            Order storage m = orders[makerId];
            uint256 q = _quantity(t, m, kind);
            if (q == 0) return;
            uint256 surplus;
            if (kind == COMPLEMENTARY) _fillComplementary(t, m, q);
            else if (kind == MINT) surplus = _fillMint(t, m, q);
            else surplus = _fillMerge(t, m, q);
            t.fills++;
            if (deployedVariants) {
                emit Deployed_exchange.OrderMatched(makerId, t.orderId, t.marketId, kind, q, m.price);
            } else {
                emit Spec_exchange.OrderMatched(makerId, t.orderId, t.marketId, kind, q, m.price, m.builder, t.builder);
            }
            _collect(t.marketId, surplus); // FeeCollected right after its OrderMatched
            _afterMakerFill(makerId, m, q);
        }
    }

    /// The head order of the best level within the taker's limit, and how it matches.
    function _nextMaker(Taker memory t) internal view returns (bytes32 makerId, uint8 kind) {
        bool buy = _isBuy(t.side);
        uint8 compSide = t.side ^ 1; // same token, other direction
        uint8 synthSide = t.side ^ 2; // other token, same direction
        uint256 comp = _best(t.marketId, compSide);
        uint256 synth = _best(t.marketId, synthSide);
        // effective prices on the taker's side; 0 = none within the limit
        if (comp != 0 && (buy ? comp > t.limit : comp < t.limit)) comp = 0;
        uint256 synthEff = synth == 0 ? 0 : PRICE_UNIT - synth;
        if (synthEff != 0 && (buy ? synthEff > t.limit : synthEff < t.limit)) synthEff = 0;
        if (comp == 0 && synthEff == 0) return (bytes32(0), 0);
        bool useComp = comp != 0 && (synthEff == 0 || (buy ? comp <= synthEff : comp >= synthEff));
        if (useComp) return (levels[t.marketId][compSide][comp / PRICE_TICK - 1].head, COMPLEMENTARY);
        return (levels[t.marketId][synthSide][synth / PRICE_TICK - 1].head, buy ? MINT : MERGE);
    }

    /// Shares to fill against maker `m`. A limit MINT whose two floored locks fall short of q is
    /// cut to a multiple of MINT_GRAIN (0 stops matching: sub-grain remainders rest, cancellable).
    function _quantity(Taker memory t, Order storage m, uint8 kind) internal view returns (uint256 q) {
        q = m.amount - m.filled;
        if (t.orderId == bytes32(0) && _isBuy(t.side)) {
            // market BUY: t.remaining is a USDC budget; cost per share is the effective price
            uint256 eff = kind == COMPLEMENTARY ? m.price : PRICE_UNIT - m.price;
            uint256 affordable = (t.remaining * PRICE_UNIT) / eff;
            if (affordable < q) q = affordable;
        } else if (t.remaining < q) {
            q = t.remaining;
        }
        if (kind == MINT && t.orderId != bytes32(0)) {
            Order storage tk = orders[t.orderId];
            if (_releaseOf(tk, q) + _releaseOf(m, q) < q) q -= q % MINT_GRAIN;
        }
    }

    /// COMPLEMENTARY: settles at the maker's price; a BUY limit taker gets its excess lock back.
    function _fillComplementary(Taker memory t, Order storage m, uint256 q) internal {
        address token = _token(t, t.side);
        if (_isBuy(t.side)) {
            _consume(m, q); // the maker's q tokens, held here, go to the taker
            t.out += q;
            if (t.orderId == bytes32(0)) {
                uint256 pay = _mulDivUp(q, m.price, PRICE_UNIT);
                _pull(address(usdc), msg.sender, m.owner, pay);
                t.spent += pay;
                t.remaining -= pay;
            } else {
                uint256 pay = (q * m.price) / PRICE_UNIT; // <= the taker's release, its price is >= m.price
                uint256 released = _consume(orders[t.orderId], q);
                _push(address(usdc), m.owner, pay);
                t.spent += released - pay; // refund
                t.remaining -= q;
            }
        } else {
            t.out += _consume(m, q); // the maker's released USDC goes to the seller
            if (t.orderId == bytes32(0)) {
                _pull(token, msg.sender, m.owner, q);
                t.spent += q;
            } else {
                _consume(orders[t.orderId], q);
                _push(token, m.owner, q);
            }
            t.remaining -= q;
        }
    }

    /// MINT: both buyers' USDC is split into q YES + q NO. A limit taker pays its own price and
    /// the surplus goes to the fee recipient; a market taker pays exactly the rest (no surplus).
    function _fillMint(Taker memory t, Order storage m, uint256 q) internal returns (uint256 surplus) {
        uint256 fromMaker = _consume(m, q);
        if (t.orderId == bytes32(0)) {
            uint256 pay = q - fromMaker;
            _pull(address(usdc), msg.sender, address(this), pay);
            t.spent += pay;
            t.remaining -= pay;
        } else {
            surplus = _consume(orders[t.orderId], q) + fromMaker - q; // >= 0, see _quantity
            t.remaining -= q;
        }
        diamond.splitPosition(t.marketId, q);
        _push(_token(t, m.side), m.owner, q);
        t.out += q;
    }

    /// MERGE: q YES + q NO are merged into q USDC; the maker gets its own price. A limit taker
    /// gets its own price and the surplus goes to the fee recipient; a market taker gets the rest.
    function _fillMerge(Taker memory t, Order storage m, uint256 q) internal returns (uint256 surplus) {
        _consume(m, q);
        uint256 toMaker = (q * m.price) / PRICE_UNIT;
        uint256 toTaker;
        if (t.orderId == bytes32(0)) {
            _pull(_token(t, t.side), msg.sender, address(this), q);
            t.spent += q;
            toTaker = q - toMaker;
        } else {
            _consume(orders[t.orderId], q);
            toTaker = (q * t.limit) / PRICE_UNIT; // floors: toMaker + toTaker <= q
        }
        t.remaining -= q;
        diamond.mergePositions(t.marketId, q);
        _push(address(usdc), m.owner, toMaker);
        t.out += toTaker;
        surplus = q - toMaker - toTaker;
    }

    function _collect(uint256 marketId, uint256 amount) internal {
        if (amount == 0) return;
        _push(address(usdc), diamond.feeRecipient(), amount);
        emit Spec_exchange.FeeCollected(marketId, amount);
    }

    // ---------------------------------------------------------------- locks

    /// What filling q more of `o` releases from its lock: a BUY keeps floor(remaining * price / 1e6)
    /// locked, so the releases of all its fills add up to exactly its deposit; a SELL releases q.
    function _releaseOf(Order storage o, uint256 q) internal view returns (uint256) {
        if (!_isBuy(o.side)) return q;
        return o.depositLocked - ((o.amount - o.filled - q) * o.price) / PRICE_UNIT;
    }

    function _consume(Order storage o, uint256 q) internal returns (uint256 released) {
        released = _releaseOf(o, q);
        o.depositLocked -= released;
        o.filled += q;
    }

    // ---------------------------------------------------------------- book

    function _enqueue(bytes32 id, Order storage o) internal {
        uint256 index = o.price / PRICE_TICK - 1;
        Level storage l = levels[o.marketId][o.side][index];
        if (l.count >= MAX_QUEUE_DEPTH_PER_PRICE) revert QueueFull(o.marketId, o.side, o.price);
        if (l.tail == bytes32(0)) {
            l.head = id;
            bitmaps[o.marketId][o.side] |= 1 << index;
        } else {
            links[l.tail].next = id;
            links[id].prev = l.tail;
        }
        l.tail = id;
        l.count++;
        l.total += o.amount - o.filled;
    }

    function _afterMakerFill(bytes32 id, Order storage m, uint256 q) internal {
        if (m.filled == m.amount) _unlink(id, m, q);
        else levels[m.marketId][m.side][m.price / PRICE_TICK - 1].total -= q;
    }

    /// Removes a live order from its level; `amount` is what it still counted in the level's total.
    function _unlink(bytes32 id, Order storage o, uint256 amount) internal {
        uint256 index = o.price / PRICE_TICK - 1;
        Level storage l = levels[o.marketId][o.side][index];
        Link memory link = links[id];
        if (link.prev == bytes32(0)) l.head = link.next;
        else links[link.prev].next = link.next;
        if (link.next == bytes32(0)) l.tail = link.prev;
        else links[link.next].prev = link.prev;
        delete links[id];
        l.count--;
        l.total -= amount;
        if (l.head == bytes32(0)) bitmaps[o.marketId][o.side] &= ~(uint256(1) << index);
    }

    /// Best price of a side: the highest bid for BUY sides, the lowest ask for SELL sides; 0 = empty.
    function _best(uint256 marketId, uint8 side) internal view returns (uint256) {
        uint256 bits = bitmaps[marketId][side];
        if (bits == 0) return 0;
        if (_isBuy(side)) {
            for (uint256 i = MAX_PRICE_INDEX + 1; i > 0; i--) {
                if (bits & (1 << (i - 1)) != 0) return i * PRICE_TICK;
            }
        } else {
            for (uint256 i = 0; i <= MAX_PRICE_INDEX; i++) {
                if (bits & (1 << i) != 0) return (i + 1) * PRICE_TICK;
            }
        }
        return 0;
    }

    // ---------------------------------------------------------------- helpers

    function _isBuy(uint8 side) internal pure returns (bool) {
        return side == Sides.BUY_YES || side == Sides.BUY_NO;
    }

    function _token(Taker memory t, uint8 side) internal pure returns (address) {
        return side <= Sides.SELL_YES ? t.yes : t.no;
    }

    function _mulDivUp(uint256 a, uint256 b, uint256 d) internal pure returns (uint256) {
        return (a * b + d - 1) / d;
    }

    function _pull(address token, address from, address to, uint256 amount) internal {
        if (amount == 0) return;
        if (!IERC20(token).transferFrom(from, to, amount)) revert TransferFailed();
    }

    function _push(address token, address to, uint256 amount) internal {
        if (amount == 0) return;
        if (!IERC20(token).transfer(to, amount)) revert TransferFailed();
    }
}
