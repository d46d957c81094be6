/**
 * The feeds of one backend instance: one per (topic, market) that some client follows, each a
 * keyed state with a sequence number, the indexed head it holds and the last `history` deltas.
 *
 * Driven by the moves of the indexed head (`http/core/indexed-heads.ts`: the indexer's
 * `predix_indexed` NOTIFY, heard once per process, and its checkpoint poll); each move
 * re-reads every live feed once (one read per feed, however many clients follow it) and sends
 * the difference as a delta to that feed's subscribers. Notifications that arrive during a
 * refresh are coalesced into the next one. Invariants:
 * - a subscriber gets the snapshot (or the missed deltas) and is attached under the feed's lock,
 *   which every refresh also holds: no delta falls between a snapshot and the first delta after it;
 * - seq grows by exactly one per delta of a feed, and a feed's `stream` id changes whenever its
 *   seq numbering restarts (a new feed), so a `resume` never matches numbers of another run;
 * - a delta is sent only when entries changed; a reorg's corrections are deltas (`reorg: true`
 *   when a reverted head was announced since the previous refresh: the subscription sees every move).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Queue } from "effect"
import { randomUUID } from "node:crypto"
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
  seq: number
  head: IndexedHead | null
  /** key -> JSON text of the value (compared) and the value (sent). */
  state: Map<string, { readonly json: string; readonly value: unknown }>
  history: Array<ServerMessage & { readonly type: "delta" }>
  idleSince: number | null
}

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

    const refresh = (feed: Feed, reorg: boolean) =>
      feed.lock.withPermits(1)(
        Effect.gen(function* () {
          if (!feed.loaded) return
          const next = yield* read(feed)
          const after = toState(next.entries)
          const changes = diff(feed.state, after)
          feed.head = next.head
          feed.state = after
          if (changes.length === 0) return
          feed.seq += 1
          const delta = { type: "delta" as const, ...address(feed), ...position(feed), reorg, changes }
          feed.history.push(delta)
          if (feed.history.length > historySize) feed.history.shift()
          for (const subscriber of feed.subscribers) subscriber.deliver(delta)
        }).pipe(
          // The feed keeps its state; the next notification tries again and sends the whole difference.
          Effect.catchAll((error) =>
            Effect.logWarning("stream feed not refreshed").pipe(Effect.annotateLogs({ feed: feed.key, error: String(error) }))
          )
        )
      )

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
            stream: randomUUID(),
            lock: yield* Effect.makeSemaphore(1),
            subscribers: new Set(),
            loaded: false,
            seq: 0,
            head: null,
            state: new Map(),
            history: [],
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
              current.loaded = true
            }
            current.subscribers.add(subscriber)
            current.idleSince = null
            subscriber.deliver({ type: "subscribed", ...address(current) })
            const oldest = current.history[0]?.seq ?? current.seq + 1
            if (resume !== undefined && resume.stream === current.stream && resume.seq <= current.seq && resume.seq + 1 >= oldest) {
              for (const delta of current.history) if (delta.seq > resume.seq) subscriber.deliver(delta)
            } else subscriber.deliver(snapshot(current))
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

/** The key of the feed of (topic, target): one feed per key per instance. */
export const feedKey = (topic: Topic, target: Target) => `${topic}|${"subject" in target ? target.subject : target.marketHex}`

export type Feeds = Effect.Effect.Success<ReturnType<typeof makeFeeds>>
