/** A log as the source hands it on: parsed from the node's answer (rpc.ts, logs-answer.ts), checked against its block. */
export interface ChainLog {
  readonly address: string
  readonly topics: ReadonlyArray<string>
  readonly data: string
  readonly blockNumber: number
  readonly blockHash: string
  readonly logIndex: number
  readonly transactionHash: string
  readonly transactionIndex: number
  /** The block's timestamp, where the node includes it in logs (current clients do). */
  readonly blockTimestamp: number | undefined
}
