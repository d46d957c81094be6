/** The read behind `GET /api/health` (see `health.ts`): the checkpoint the pipeline commits. */
import { Effect } from "effect"
import { ServiceUnavailable } from "../../../schema/errors.js"
import { lagOf, readCheckpoint } from "../../../schema/indexer-checkpoint.js"
import type { Health } from "../health.js"

/** Reads the checkpoint of `chainId`; fails only when the database does not answer. */
export const readHealth = (chainId: number) =>
  Effect.gen(function* () {
    const checkpoint = yield* readCheckpoint(chainId)
    const latestIndexedBlock = checkpoint?.block ?? null
    const headBlock = checkpoint?.head ?? null
    const lagBlocks = lagOf(checkpoint)
    return { status: "ok", chainId, latestIndexedBlock, headBlock, lagBlocks } satisfies Health
  }).pipe(
    // Disconnected: a query stuck in an uninterruptible connect must not hold the answer back.
    Effect.disconnect,
    Effect.timeout("5 seconds"),
    Effect.mapError((error) => new ServiceUnavailable({ message: `database unavailable: ${error.message}` }))
  )
