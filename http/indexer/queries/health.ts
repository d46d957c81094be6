/** The read behind `GET /api/health` (see `health.ts`): the checkpoint the pipeline commits. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ServiceUnavailable } from "../../../schema/errors.js"
import type { Health } from "../health.js"
import { int, nullable, rowDecoder } from "./rows.js"

const decodeCheckpointRow = rowDecoder({ block_number: int, head_block: nullable(int) })

/** Reads the checkpoint of `chainId`; fails only when the database does not answer. */
export const readHealth = (chainId: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [raw] = yield* sql`select block_number, head_block from indexer_checkpoint where chain_id = ${chainId}`
    const row = raw === undefined ? undefined : decodeCheckpointRow(raw)
    const latestIndexedBlock = row?.block_number ?? null
    const headBlock = row?.head_block ?? null
    const lagBlocks = latestIndexedBlock !== null && headBlock !== null ? Math.max(0, headBlock - latestIndexedBlock) : null
    return { status: "ok", chainId, latestIndexedBlock, headBlock, lagBlocks } satisfies Health
  }).pipe(
    // Disconnected: a query stuck in an uninterruptible connect must not hold the answer back.
    Effect.disconnect,
    Effect.timeout("5 seconds"),
    Effect.mapError((error) => new ServiceUnavailable({ message: `database unavailable: ${error.message}` }))
  )
