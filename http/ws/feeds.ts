/**
 * The feeds of one backend instance: one per (topic, market) that some client follows, each a
 * keyed state at a commit position, the indexed head it holds and the last `history` deltas.
 *
 * Driven by the moves of the indexed head (`http/core/indexed-heads.ts`: the indexer's
 * `predix_indexed` NOTIFY, heard once per process, and its checkpoint poll); each move
 * re-reads the live feeds it may have changed once (one read per feed, however many clients
 * follow it) and sends the difference as a delta to that feed's subscribers. A market's feeds
 * are read only when a move since their last refresh names the market (the NOTIFY's `markets`:
 * the markets whose rows the commit changed) or names none (not known: a revert, a checkpoint
 * read, a backfill batch); a user's feeds on every move (a portfolio moves with any of its
 * markets). The feeds of one target (a market's
 * orderbook, trades and prices; a user's topics) are read together, in one transaction at one
 * position, and their deltas delivered in one batch (`deliverAll`: the server writes all of a
 * socket's frames of the batch at once). A delta is encoded once (`Frame`) and the same bytes
 * go to every subscriber. Notifications that arrive during a refresh are coalesced into the next one.
 *
 * Positions come from the data, not from this process: a read names the commit position
 * (`commit_seq` of the checkpoint, read in the same repeatable-read transaction as the rows) of
 * the state it saw, so two instances that read at one position hold the same entries; `stream` is
 * a hash of (chain, topic, target, window). A message's `seq` is the position of the state it
 * leaves the client holding; a delta's `prev` the position it applies to. Invariants:
 * - a subscriber gets the snapshot (or the missed deltas) and is attached under the feed's lock,
 *   which every refresh also holds: no delta falls between a snapshot and the first delta after it;
 * - a feed's `seq` is the position where its state last changed (reads since found the same
 *   state); a snapshot carries it, and every delta's `prev` is the `seq` before it, so a client
 *   applying them in order never skips or repeats a change;
 * - a `resume` at (stream, seq) gets deltas only when this feed read the state at exactly that
 *   position and still holds every delta since (the client's state is then provably the feed's
 *   state at that read, whichever instance sent it); otherwise a snapshot. A revert takes a new
 *   position, so a state from before a reorg is never taken for one after it;
 * - a delta is sent only when entries changed; a reorg's corrections are deltas (`reorg: true`
 *   when a reverted head was announced since the previous refresh: the subscription sees every move).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Queue } from "effect"
import { createHash } from "node:crypto"
import { type IndexedHead, IndexedHeads } from "../core/indexed-heads.js"
import { Frame, type Change, type ErrorCode, type ServerMessage } from "./protocol.js"
import { isMarketNotFound, readTopics, RecordEncodeError, targetFields, type Entries, type Target, type Topic } from "./topics.js"

export interface FeedOptions {
  readonly chainId: number
  /** Trades and price points a feed keeps (default 50). */
  readonly window?: number
  /** Deltas kept per feed for `resume` (default 256). */
  readonly history?: number
  /** How long a feed nobody follows is kept for a reconnecting client's `resume` (default 60 s). */
  readonly idleMs?: number
  /** How often the instance's own heads source reads the checkpoint, when none is provided (default 5 s; see `server.ts`). */
  readonly checkEveryMs?: number
  /** Called after each refresh of a target's feeds with when its steps happened (for benchmarks; off by default). */
  readonly trace?: (trace: RefreshTrace) => void
}

/**
 * One refresh of one target's feeds, times in ms on the monotonic clock (`process.hrtime`, the
 * same in every process of the machine).
 */
export interface RefreshTrace {
  /** The target whose feeds were read: a market's id (0x + 64 hex) or a user's address. */
  readonly target: string
  /** The head move that started the refresh was taken from the indexed heads. */
  readonly woken: number
  /** The target's feed locks were held and its read began. */
  readonly readStart: number
  /** The read's transaction was done. */
  readonly readEnd: number
  /** Every delta was encoded and written to its subscribers' sockets. */
  readonly sent: number
  /** Process CPU time (user + system, µs) of encoding and writing them (a synchronous step: its own work only). */
  readonly sendCpu: number
  /** The indexed head the read found (null before the first commit). */
  readonly block: number | null
  /** Feeds read, deltas made and frames delivered (one per delta per subscriber). */
  readonly feeds: number
  readonly deltas: number
  readonly frames: number
}

/** Receives a feed's messages, in order; must not block. */
export interface Subscriber {
  readonly deliver: (frame: Frame) => void
}

/**
 * Runs `deliver`, which hands frames to subscribers; the server makes it one batch (each socket's
 * frames written together). The default runs it as it is.
 */
export type DeliverAll = (deliver: () => void) => void

export class FeedError {
  constructor(
    readonly code: ErrorCode,
    readonly message: string
  ) {}
}

interface Feed {
  readonly key: string
  readonly topic: Topic
  readonly target: Target
  readonly stream: string
  readonly lock: Effect.Semaphore
  readonly subscribers: Set<Subscriber>
  loaded: boolean
  /**
   * The position of `state` as messages name it: the read where it last changed (or the first
   * read). Reads since found the same state, so it is the state at each of their positions too.
   */
  seq: number
  /** The position of the last read. */
  readAt: number
  head: IndexedHead | null
  /** key -> JSON text of the value (compared) and the value (sent). */
  state: Map<string, { readonly json: string; readonly value: unknown }>
  /** The last deltas, oldest first, encoded; the last one is delta number `made - 1` of this feed. */
  history: Array<Frame>
  /** Deltas this feed has made. */
  made: number
  /** Positions this feed read, oldest first, each with the deltas made up to it (`made` then). */
  reads: Array<{ readonly seq: number; readonly made: number }>
  idleSince: number | null
  /** The snapshot of the current state and head, encoded once for every client that subscribes before the next read. */
  snapshot: Frame | undefined
}

type Delta = ServerMessage & { readonly type: "delta" }

const toState = (entries: Entries) => new Map(entries.map(([key, value]) => [key, { json: JSON.stringify(value), value }] as const))

/** The changes that turn `before` into `after`: removals first, then upserts in `after`'s order. */
const diff = (before: Feed["state"], after: Feed["state"]): Array<Change> => {
  const changes: Array<Change> = []
  for (const key of before.keys()) if (!after.has(key)) changes.push({ op: "remove", key })
  for (const [key, entry] of after) if (before.get(key)?.json !== entry.json) changes.push({ op: "upsert", key, value: entry.value })
  return changes
}

/**
 * What a subscriber is told when its feed's first read fails: a missing market; a record the
 * server cannot encode (INTERNAL_ERROR naming the entry: trying again will not help); else the
 * index could not be read (SERVICE_UNAVAILABLE: try again).
 */
const feedError = (error: unknown): FeedError =>
  isMarketNotFound(error)
    ? new FeedError("MARKET_NOT_FOUND", "no market with this id")
    : error instanceof RecordEncodeError
      ? new FeedError("INTERNAL_ERROR", `the ${error.topic} entry ${error.key} could not be encoded; the server logged it`)
      : new FeedError("SERVICE_UNAVAILABLE", "the index could not be read; try again")

/**
 * Logs a failed read of `feeds` with what failed: a record that does not fit its schema at error
 * level (topic, entry key, the schema's complaint), anything else (an outage) as a warning.
 */
const logReadFailure = (what: string, feeds: string, error: unknown) =>
  isMarketNotFound(error)
    ? Effect.void
    : error instanceof RecordEncodeError
      ? Effect.logError(`${what}: an entry does not fit its schema`).pipe(
          Effect.annotateLogs({ feeds, topic: error.topic, key: error.key, issue: error.issue })
        )
      : Effect.logWarning(what).pipe(Effect.annotateLogs({ feeds, error: String(error) }))

/** Milliseconds on the system's monotonic clock: comparable across the processes of one machine. */
const now = () => Number(process.hrtime.bigint()) / 1e6

/** The key of a target: the feeds of one target are read together. */
const targetKey = (target: Target) => ("subject" in target ? target.subject : target.marketHex)

export const makeFeeds = (options: FeedOptions, deliverAll: DeliverAll = (deliver) => deliver()) =>
  Effect.gen(function* () {
    const window = options.window ?? 50
    const historySize = options.history ?? 256
    const idleMs = options.idleMs ?? 60_000
    const sql = yield* SqlClient.SqlClient
    const moves = yield* Effect.flatMap(IndexedHeads, (heads) => heads.subscribe)
    const feeds = new Map<string, Feed>()
    let reorgPending = false
    // The markets (decimal ids) the moves since the last refresh changed; "all" when one did not say.
    let changedPending: Set<string> | "all" = new Set()
    // Holds the time of the latest move not yet acted on (coalesced: one refresh follows many moves).
    const wake = yield* Queue.sliding<number>(1)

    /** Reads `group`, feeds of one target, at one position; `entries[i]` are `group[i]`'s. */
    const read = (group: ReadonlyArray<Feed>, missingIsEmpty: boolean) =>
      readTopics(
        options.chainId,
        group.map((feed) => feed.topic),
        group[0]!.target,
        window,
        missingIsEmpty
      ).pipe(Effect.provideService(SqlClient.SqlClient, sql))
    const position = (feed: Feed) => ({
      stream: feed.stream,
      seq: feed.seq,
      block: feed.head?.block ?? null,
      hash: feed.head?.hash ?? null
    })
    const address = (feed: Feed) => ({ topic: feed.topic, ...targetFields(feed.target) })
    const snapshot = (feed: Feed): ServerMessage => ({
      type: "snapshot",
      ...address(feed),
      ...position(feed),
      data: [...feed.state].map(([key, entry]) => ({ key, value: entry.value }))
    })

    /** Records a read at `seq`; forgets reads whose deltas since are no longer all held (or too many). */
    const remember = (feed: Feed, seq: number) => {
      feed.reads.push({ seq, made: feed.made })
      const firstHeld = feed.made - feed.history.length
      while (feed.reads.length > 0 && (feed.reads[0]!.made < firstHeld || feed.reads.length > historySize * 4)) feed.reads.shift()
    }

    /**
     * Takes a read of the feed at `commit` and answers the delta it makes, if any (not yet
     * delivered); the caller holds the lock.
     */
    const apply = (feed: Feed, read: { readonly head: IndexedHead | null; readonly commit: number }, entries: Entries, reorg: boolean) => {
      // Reads under one lock run one after another, and positions only grow: an older one is impossible.
      if (read.commit <= feed.readAt) return undefined
      const after = toState(entries)
      const changes = diff(feed.state, after)
      const prev = feed.seq
      feed.head = read.head
      feed.state = after
      feed.readAt = read.commit
      feed.snapshot = undefined
      let delta: Frame | undefined
      if (changes.length > 0) {
        feed.seq = read.commit
        delta = new Frame({ type: "delta", ...address(feed), ...position(feed), prev, reorg, changes })
        feed.history.push(delta)
        feed.made += 1
        if (feed.history.length > historySize) feed.history.shift()
      }
      remember(feed, feed.readAt)
      return delta
    }

    /** Hands each delta to its feed's subscribers, in one batch; the caller holds the feeds' locks. */
    const deliver = (deltas: ReadonlyArray<readonly [Feed, Frame | undefined]>) => {
      let frames = 0
      deliverAll(() => {
        for (const [feed, delta] of deltas) {
          if (delta === undefined) continue
          for (const subscriber of feed.subscribers) subscriber.deliver(delta)
          frames += feed.subscribers.size
        }
      })
      return frames
    }

    /** Reads one feed again and sends the difference; the caller holds the lock. */
    const step = (feed: Feed, reorg: boolean) =>
      Effect.map(read([feed], feed.loaded), (next) => void deliver([[feed, apply(feed, next, next.entries[0]!, reorg)]]))

    /**
     * Reads the loaded feeds of `group` (one target's) again at one position and sends their
     * differences, holding every one's lock from before the read until the deltas are delivered.
     * A feed still loading when the refresh began is waited for (its lock) and then read too: its
     * first read may predate the commit that woke this refresh.
     */
    const refresh = (group: ReadonlyArray<Feed>, reorg: boolean, woken: number) =>
      group
        .reduce(
          (body, feed) => feed.lock.withPermits(1)(body),
          Effect.gen(function* () {
            const live = group.filter((feed) => feed.loaded)
            if (live.length === 0) return
            const readStart = options.trace === undefined ? 0 : now()
            const next = yield* read(live, true)
            const readEnd = options.trace === undefined ? 0 : now()
            const deltas = live.map((feed, i) => [feed, apply(feed, next, next.entries[i]!, reorg)] as const)
            const cpu = options.trace === undefined ? undefined : process.cpuUsage()
            const frames = deliver(deltas)
            if (options.trace === undefined) return
            const sendCpu = process.cpuUsage(cpu)
            options.trace({
              target: targetKey(group[0]!.target),
              woken,
              readStart,
              readEnd,
              sent: now(),
              sendCpu: sendCpu.user + sendCpu.system,
              block: next.head?.block ?? null,
              feeds: live.length,
              deltas: deltas.filter(([, delta]) => delta !== undefined).length,
              frames
            })
          })
        )
        .pipe(
          // The feeds keep their state; the next notification tries again and sends the whole difference.
          Effect.catchAll((error) => logReadFailure("stream feeds not refreshed", group.map((feed) => feed.key).join(" "), error))
        )

    /**
     * The deltas that take a client holding (stream, seq) to the feed's state, when the feed can
     * prove them: it read exactly that position and holds every delta made since. The first one's
     * `prev` is the client's position (the feed's state there was the state at that read).
     */
    const catchUp = (feed: Feed, resume: { readonly stream: string; readonly seq: number }): Array<Frame> | undefined => {
      if (resume.stream !== feed.stream) return undefined
      const at = feed.reads.find((r) => r.seq === resume.seq)
      const firstHeld = feed.made - feed.history.length
      if (at === undefined || at.made < firstHeld) return undefined
      return feed.history.slice(at.made - firstHeld).map((frame, i) => {
        const delta = frame.message as Delta
        return i === 0 && delta.prev !== resume.seq ? new Frame({ ...delta, prev: resume.seq }) : frame
      })
    }

    /**
     * Whether a move since the last refresh may have changed what `target` streams: a market's
     * rows change only in commits that name it (or name no markets); a user's state may move with
     * any commit.
     */
    const mayHaveChanged = (target: Target, changed: ReadonlySet<string> | "all") =>
      changed === "all" || "subject" in target || changed.has(target.marketId.toString())

    const refreshAll = (woken: number) =>
      Effect.gen(function* () {
        const reorg = reorgPending
        reorgPending = false
        const changed = changedPending
        changedPending = new Set()
        const at = Date.now()
        for (const [key, feed] of feeds)
          if (feed.subscribers.size === 0 && feed.idleSince !== null && at - feed.idleSince > idleMs) feeds.delete(key)
        const groups = new Map<string, Array<Feed>>()
        for (const feed of feeds.values()) {
          if (!mayHaveChanged(feed.target, changed)) continue
          const key = targetKey(feed.target)
          const group = groups.get(key)
          if (group === undefined) groups.set(key, [feed])
          else group.push(feed)
        }
        yield* Effect.forEach(groups.values(), (group) => refresh(group, reorg, woken), { concurrency: 4, discard: true })
      })

    yield* Queue.take(wake).pipe(
      Effect.flatMap((woken) => refreshAll(woken)),
      Effect.forever,
      Effect.forkScoped
    )
    // Every move is taken, so no reverted one and no changed market is missed; the refreshes they wake are coalesced.
    yield* Queue.take(moves).pipe(
      Effect.flatMap((move) => {
        if (move.reverted) reorgPending = true
        if (move.markets === undefined) changedPending = "all"
        else if (changedPending !== "all") for (const market of move.markets) changedPending.add(market)
        return Queue.offer(wake, options.trace === undefined ? 0 : now())
      }),
      Effect.forever,
      Effect.forkScoped
    )

    /**
     * Attaches `subscriber` to the feed `key` (see `feedKey`) of (topic, target): it gets
     * `subscribed`, then the deltas after `resume.seq` when the feed still holds them all, else a snapshot.
     */
    const subscribe = (
      key: string,
      topic: Topic,
      target: Target,
      subscriber: Subscriber,
      resume?: { readonly stream: string; readonly seq: number }
    ) =>
      Effect.gen(function* () {
        let feed = feeds.get(key)
        if (feed === undefined) {
          feed = {
            key,
            topic,
            target,
            stream: streamId(options.chainId, key, window),
            lock: yield* Effect.makeSemaphore(1),
            subscribers: new Set(),
            loaded: false,
            seq: 0,
            readAt: 0,
            head: null,
            state: new Map(),
            history: [],
            made: 0,
            reads: [],
            idleSince: Date.now(),
            snapshot: undefined
          }
          feeds.set(key, feed)
        }
        const current = feed
        yield* current.lock.withPermits(1)(
          Effect.gen(function* () {
            if (!current.loaded) {
              const first = yield* read([current], false).pipe(
                Effect.tapError((error) => logReadFailure("stream feed not read", key, error)),
                Effect.mapError(feedError),
                Effect.tapError(() => Effect.sync(() => current.subscribers.size === 0 && feeds.get(key) === current && feeds.delete(key)))
              )
              current.state = toState(first.entries[0]!)
              current.head = first.head
              current.seq = first.commit
              current.readAt = first.commit
              current.loaded = true
              remember(current, current.readAt)
            } else if (resume !== undefined && resume.seq > current.readAt)
              // The client saw a later commit (on another instance) than this feed has read yet: read
              // now, so the position it names can be found if nothing changed since.
              yield* step(current, reorgPending).pipe(Effect.catchAll(() => Effect.void))
            current.subscribers.add(subscriber)
            current.idleSince = null
            const missed = resume === undefined ? undefined : catchUp(current, resume)
            deliverAll(() => {
              subscriber.deliver(new Frame({ type: "subscribed", ...address(current) }))
              if (missed === undefined) subscriber.deliver((current.snapshot ??= new Frame(snapshot(current))))
              else for (const delta of missed) subscriber.deliver(delta)
            })
          })
        )
      })

    const unsubscribe = (key: string, subscriber: Subscriber) => {
      const feed = feeds.get(key)
      if (feed === undefined || !feed.subscribers.delete(subscriber)) return false
      if (feed.subscribers.size === 0) feed.idleSince = Date.now()
      return true
    }

    return { subscribe, unsubscribe, feedCount: () => feeds.size }
  })

/**
 * The stream id of a feed: a function of what it streams, the same on every instance (a
 * position names one state only within one stream).
 */
export const streamId = (chainId: number, key: string, window: number) =>
  createHash("sha256").update(`predix-ws|${chainId}|${key}|${window}`).digest("hex").slice(0, 32)

/** The key of the feed of (topic, target): one feed per key per instance. */
export const feedKey = (topic: Topic, target: Target) => `${topic}|${"subject" in target ? target.subject : target.marketHex}`

export type Feeds = Effect.Effect.Success<ReturnType<typeof makeFeeds>>
