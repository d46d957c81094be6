/**
 * The reorg check of the sink's tests: blocks 10 (finalized: no undo), 11 and 12 applied, then a
 * revert to 10, which must restore exactly what 10 left, then 11b; the result must equal a fresh
 * database that indexed 10 and 11b. Answers the reorged database's dump.
 */
import type { SqlClient } from "@effect/sql"
import { Effect, LogLevel } from "effect"
import { expect } from "vitest"
import { applyBatch, type LocatedEvent } from "../../pipeline/batch.js"
import type { ProtocolContracts } from "../../pipeline/reduce/model.js"
import { revertTo } from "../../pipeline/sink.js"
import { withScratchDb } from "../support/postgres.js"
import { H } from "./fold.js"

const cp = (block: number, fork = 0) => ({ chainId: 130, block, hash: H(block + fork * 1000), digest: H(block), head: 20 })
const withDb = <A, E>(body: Effect.Effect<A, E, SqlClient.SqlClient>) => withScratchDb(body, LogLevel.Warning)

export const reorgEqualsScratch = <D, E>(options: {
  readonly protocol: ProtocolContracts
  readonly dump: Effect.Effect<D, E, SqlClient.SqlClient>
  readonly blocks: {
    readonly b10: ReadonlyArray<LocatedEvent>
    readonly b11: ReadonlyArray<LocatedEvent>
    readonly b12: ReadonlyArray<LocatedEvent>
    readonly b11b: ReadonlyArray<LocatedEvent>
  }
  /** Checks of the state at block 12 against the ancestor's, before the revert. */
  readonly atTip?: (atTip: D, atAncestor: D) => void
}) =>
  Effect.gen(function* () {
    const { protocol, dump, blocks } = options
    const reorged = yield* withDb(
      Effect.gen(function* () {
        yield* applyBatch(blocks.b10, cp(10), protocol, undefined)
        const atAncestor = yield* dump
        yield* applyBatch(blocks.b11, cp(11), protocol, 11)
        yield* applyBatch(blocks.b12, cp(12), protocol, 12)
        options.atTip?.(yield* dump, atAncestor)
        yield* revertTo({ chainId: 130, block: 10, hash: H(10), digest: H(10) })
        expect(yield* dump).toEqual(atAncestor)
        yield* applyBatch(blocks.b11b, cp(11, 1), protocol, 11)
        return yield* dump
      })
    )
    const scratch = yield* withDb(
      Effect.gen(function* () {
        yield* applyBatch(blocks.b10, cp(10), protocol, undefined)
        yield* applyBatch(blocks.b11b, cp(11, 1), protocol, undefined)
        return yield* dump
      })
    )
    expect(reorged).toEqual(scratch)
    return reorged
  })
