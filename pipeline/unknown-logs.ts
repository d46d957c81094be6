/**
 * Logs of watched contracts that no ABI knows: counted, with one warning per (address, topic0)
 * through the configured logger (a new event kind the indexer cannot read yet, not an error).
 */
import { Effect } from "effect"
import type { UnknownLogs } from "./decode-batch.js"

export class UnknownLogTally {
  private readonly seen = new Set<string>()
  /** Unknown logs seen by this process. */
  count = 0

  note(logs: ReadonlyArray<UnknownLogs>): Effect.Effect<void> {
    return Effect.suspend(() => {
      const fresh: Array<UnknownLogs> = []
      for (const u of logs) {
        this.count += u.count
        const key = `${u.address}/${u.topic0}`
        if (this.seen.has(key)) continue
        this.seen.add(key)
        fresh.push(u)
      }
      return Effect.forEach(
        fresh,
        (u) => Effect.logWarning("unknown log").pipe(Effect.annotateLogs({ address: u.address, topic0: u.topic0, block: u.block })),
        {
          discard: true
        }
      )
    })
  }
}
