/**
 * The feeds of one backend instance: one per (topic, market) that some client follows, each a
 * keyed state at a commit position, the indexed head it holds and the last `history` deltas.
 *
 * Driven by the moves of the indexed head (`http/core/indexed-heads.ts`: the indexer's
 * `predix_indexed` NOTIFY, heard once per process, and its checkpoint poll); each move
 * re-reads every live feed once (one read per feed, however many clients follow it) and sends
 * the difference as a delta to that feed's subscribers. Notifications that arrive during a
 * refresh are coalesced into the next one.
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
import type { Change, ErrorCode, ServerMessage } from "./protocol.js"
import { isMarketNotFound, readTopic, targetFields, type Entries, type Target, type Topic } from "./topics.js"

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
}

/** Receives a feed's messages, in order; must not block. */
export interface Subscriber {
  readonly deliver: (message: ServerMessage) => void
}

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
  /** The last deltas, oldest first; the last one is delta number `made - 1` of this feed. */
  history: Array<Delta>
  /** Deltas this feed has made. */
  made: number
  /** Positions this feed read, oldest first, each with the deltas made up to it (`made` then). */
  reads: Array<{ readonly seq: number; readonly made: number }>
  idleSince: number | null
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

const feedError = (error: unknown): FeedError =>
  isMarketNotFound(error)
    ? new FeedError("MARKET_NOT_FOUND", "no market with this id")
    : new FeedError("SERVICE_UNAVAILABLE", "the index could not be read; try again")

export const makeFeeds = (options: FeedOptions) =>
  Effect.gen(function* () {
    const window = options.window ?? 50
    const historySize = options.history ?? 256
    const idleMs = options.idleMs ?? 60_000
    const sql = yield* SqlClient.SqlClient
    const moves = yield* Effect.flatMap(IndexedHeads, (heads) => heads.subscribe)
    const feeds = new Map<string, Feed>()
    let reorgPending = false
    const wake = yield* Queue.sliding<void>(1)

    const read = (feed: Feed) =>
      readTopic(options.chainId, feed.topic, feed.target, window, feed.loaded).pipe(Effect.provideService(SqlClient.SqlClient, sql))
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

    /** Reads the feed again and sends the difference; the caller holds the lock. */
    const step = (feed: Feed, reorg: boolean) =>
      Effect.gen(function* () {
        const next = yield* read(feed)
        // Reads under one lock run one after another, and positions only grow: an older one is impossible.
        if (next.commit <= feed.readAt) return
        const after = toState(next.entries)
        const changes = diff(feed.state, after)
        const prev = feed.seq
        feed.head = next.head
        feed.state = after
        feed.readAt = next.commit
        if (changes.length > 0) {
          feed.seq = next.commit
          const delta: Delta = { type: "delta", ...address(feed), ...position(feed), prev, reorg, changes }
          feed.history.push(delta)
          feed.made += 1
          if (feed.history.length > historySize) feed.history.shift()
          for (const subscriber of feed.subscribers) subscriber.deliver(delta)
        }
        remember(feed, feed.readAt)
      })

    const refresh = (feed: Feed, reorg: boolean) =>
      feed.lock.withPermits(1)(
        Effect.gen(function* () {
          if (!feed.loaded) return
          yield* step(feed, reorg)
        }).pipe(
          // The feed keeps its state; the next notification tries again and sends the whole difference.
          Effect.catchAll((error) =>
            Effect.logWarning("stream feed not refreshed").pipe(Effect.annotateLogs({ feed: feed.key, error: String(error) }))
          )
        )
      )

    /**
     * The deltas that take a client holding (stream, seq) to the feed's state, when the feed can
     * prove them: it read exactly that position and holds every delta made since. The first one's
     * `prev` is the client's position (the feed's state there was the state at that read).
     */
    const catchUp = (feed: Feed, resume: { readonly stream: string; readonly seq: number }): Array<Delta> | undefined => {
      if (resume.stream !== feed.stream) return undefined
      const at = feed.reads.find((r) => r.seq === resume.seq)
      const firstHeld = feed.made - feed.history.length
      if (at === undefined || at.made < firstHeld) return undefined
      return feed.history.slice(at.made - firstHeld).map((delta, i) => (i === 0 ? { ...delta, prev: resume.seq } : delta))
    }

    const refreshAll = Effect.gen(function* () {
      const reorg = reorgPending
      reorgPending = false
      const now = Date.now()
      for (const [key, feed] of feeds)
        if (feed.subscribers.size === 0 && feed.idleSince !== null && now - feed.idleSince > idleMs) feeds.delete(key)
      yield* Effect.forEach([...feeds.values()], (feed) => refresh(feed, reorg), { concurrency: 4, discard: true })
    })

    yield* Queue.take(wake).pipe(Effect.zipRight(refreshAll), Effect.forever, Effect.forkScoped)
    // Every move is taken, so no reverted one is missed; the refreshes they wake are coalesced.
    yield* Queue.take(moves).pipe(
      Effect.flatMap((move) => {
        if (move.reverted) reorgPending = true
        return Queue.offer(wake, undefined)
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
            idleSince: Date.now()
          }
          feeds.set(key, feed)
        }
        const current = feed
        yield* current.lock.withPermits(1)(
          Effect.gen(function* () {
            if (!current.loaded) {
              const first = yield* read(current).pipe(
                Effect.mapError(feedError),
                Effect.tapError(() => Effect.sync(() => current.subscribers.size === 0 && feeds.get(key) === current && feeds.delete(key)))
              )
              current.state = toState(first.entries)
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
            subscriber.deliver({ type: "subscribed", ...address(current) })
            const missed = resume === undefined ? undefined : catchUp(current, resume)
            if (missed === undefined) subscriber.deliver(snapshot(current))
            else for (const delta of missed) subscriber.deliver(delta)
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
