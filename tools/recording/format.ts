/**
 * The recording format: gzip-compressed NDJSON, one record per line.
 *
 *   {"t":"meta", ...}      first line: format version, chain id, deployment, provenance
 *   {"t":"block", ...}     a block as it became the head, with the watched contracts' logs
 *                          (and its header's logsBloom where the source gave one)
 *   {"t":"finalized", n}   the source's finalized block advanced to n
 *
 * Block records appear in the order the heads were SEEN, not sorted: a block whose number is at
 * or below the previous record's is a reorg that replaced everything from its number up. A
 * replay that applies the records in file order therefore sees the chain exactly as the
 * recorder did, orphaned blocks included.
 *
 * Logs keep the JSON-RPC shape minus the fields the block record already carries (blockHash,
 * blockNumber, removed). Numbers that fit a JS number (block numbers, timestamps, log
 * indexes) are JSON numbers; everything else stays a 0x-hex string as the node sent it.
 *
 * A file may consist of several gzip members (a resumed recording appends one); readers accept
 * that, as gzip itself does.
 */
import { BLOOM_HEX } from "../../pipeline/source/bloom.js"
import type { Deployment } from "../../schema/deployment.js"

export const FORMAT_VERSION = 1

export interface MetaRecord {
  readonly t: "meta"
  readonly version: number
  readonly chainId: number
  readonly deployment: Deployment
  /** Free text: what produced the recording (e.g. "devnet scenario seed=7"). */
  readonly source: string
}

export interface RecordedLog {
  readonly address: string
  readonly topics: ReadonlyArray<string>
  readonly data: string
  readonly logIndex: number
  readonly transactionHash: string
  readonly transactionIndex: number
}

export interface BlockRecord {
  readonly t: "block"
  readonly number: number
  readonly hash: string
  readonly parentHash: string
  readonly timestamp: number
  readonly logs: ReadonlyArray<RecordedLog>
  /**
   * The header's logsBloom, lowercase 0x-hex, where the source gave one: a node's (covering every
   * log of the block, recorded or not) or the synthetic generator's. Absent in older recordings;
   * a replay then computes it from the recorded logs.
   */
  readonly logsBloom?: string
}

export interface FinalizedRecord {
  readonly t: "finalized"
  readonly number: number
}

export type Record = MetaRecord | BlockRecord | FinalizedRecord

/** Parses one line, checking the fields every consumer relies on. */
export const parseRecord = (line: string, lineNumber: number): Record => {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch (error) {
    throw new Error(`recording line ${lineNumber}: not JSON (${(error as Error).message})`)
  }
  const record = value as Partial<Record> & { t?: unknown }
  switch (record.t) {
    case "meta":
    case "finalized":
      return record as Record
    case "block": {
      const block = record as Partial<BlockRecord>
      if (
        typeof block.number !== "number" ||
        typeof block.hash !== "string" ||
        typeof block.parentHash !== "string" ||
        typeof block.timestamp !== "number" ||
        !Array.isArray(block.logs)
      ) {
        throw new Error(`recording line ${lineNumber}: block record lacks number, hash, parentHash, timestamp or logs`)
      }
      if (block.logsBloom !== undefined && (typeof block.logsBloom !== "string" || !BLOOM_HEX.test(block.logsBloom))) {
        throw new Error(`recording line ${lineNumber}: block record's logsBloom is not 0x and 512 hex digits`)
      }
      return block as BlockRecord
    }
    default:
      throw new Error(`recording line ${lineNumber}: unknown record type ${JSON.stringify(record.t)}`)
  }
}
