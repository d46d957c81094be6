/** A block's header as the source keeps it: parsed from the node's answer (rpc.ts, headers-answer.ts). */
export interface BlockHeader {
  readonly number: number
  readonly hash: string
  readonly parentHash: string
  readonly timestamp: number
  /** The header's logsBloom; undefined when the node sent none, and then nothing is checked against it. */
  readonly logsBloom?: string | undefined
}
