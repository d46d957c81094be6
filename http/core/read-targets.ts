/**
 * Where an API process reads the index from when it has read replicas (`DATABASE_READ_URL`,
 * `src/db/read-replicas.ts` builds the service): each request of the read model is served by one
 * replica in rotation, or by the primary when none is.
 *
 * Invariants:
 * - `head()` never names a block a target `pick` may hand out lacks: it is the lowest checkpoint
 *   last read on the replicas in rotation, in the generation they all replay (a standby only moves
 *   forward between two reads, short of a reorg the next read sees), or the primary's head when
 *   none is in rotation. It may step
 *   back (by at most the lag bound) when a replica joins after the primary served alone: an
 *   answer claims "at least this block", never more than its rows hold;
 * - writes, and reads of the backend's own tables, never come here: the backend routes only its
 *   read-model GETs, the indexer API (read-only) every request (`read-routing.ts`), and
 *   `respond.own`/`ownList` run on `primary` even inside a routed request;
 * - the WebSocket stream does not use it: its feeds are driven by the primary's NOTIFY and read
 *   the primary (`http/ws/feeds.ts`), so a feed's position (`commit_seq`) and rows are the
 *   primary's, read in one transaction; a standby would not yet hold the commit a NOTIFY names.
 */
import type { SqlClient } from "@effect/sql"
import { Context, type Effect } from "effect"
import type { ServiceUnavailable } from "../../schema/errors.js"
import type { IndexedHead } from "./indexed-heads.js"

/** Where one routed request runs, and the head its answer claims: the target holds at least that head. */
export interface ReadTarget {
  readonly sql: SqlClient.SqlClient
  readonly head: IndexedHead | null
}

/** One replica as the last poll found it (what /health shows). */
export interface ReplicaState {
  /** `host:port/database` of its URL (no user, no password). */
  readonly name: string
  readonly inRotation: boolean
  /** Its indexed block at the last poll; null when it did not answer or holds no index yet. */
  readonly indexedBlock: number | null
  /** Blocks it trailed the primary's checkpoint by at the last poll; null when it did not answer. */
  readonly lagBlocks: number | null
  /** Why it is out of rotation; null when in. */
  readonly problem: string | null
}

export class ReadTargets extends Context.Tag("predix/ReadTargets")<
  ReadTargets,
  {
    /**
     * `use` on the target a read-model request runs on (the next replica in rotation, else the
     * primary), with the head its answer claims, taken together: the target holds at least that
     * head. The target's pool stays open until `use` ends (a pool of a generation left meanwhile
     * is closed after its last user). Fails (503) without calling `use` when this process's
     * version cannot read the index that serves (an upgrade in progress).
     */
    readonly pick: <A, E, R>(use: (target: ReadTarget) => Effect.Effect<A, E, R>) => Effect.Effect<A, E | ServiceUnavailable, R>
    /** The head every answer of the read side claims (see the invariants above). */
    readonly head: () => IndexedHead | null
    /** The primary: where writes and the backend's own tables are read (`respond.own`). */
    readonly primary: SqlClient.SqlClient
    /** Every configured replica, as the last poll found it. */
    readonly replicas: () => ReadonlyArray<ReplicaState>
  }
>() {}
