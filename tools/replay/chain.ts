/**
 * A recorded chain that answers like a JSON-RPC node.
 *
 * The chain starts empty and plays the recording's head events in file order (`advance`): each
 * block record becomes the new head, and one numbered at or below the current head first drops
 * every canonical block from its number up, which is how a reorg looks to a client. Only what
 * has been played is visible, so a client following the head sees new blocks, gaps and reorgs
 * as the recorder saw them.
 *
 * Invariants:
 * - the canonical chain is contiguous and each block's parentHash is its predecessor's hash
 *   (checked on every applied record; a recording that breaks it is rejected);
 * - `finalized` never exceeds the head and never moves backwards, and a reorg below it is
 *   rejected as an inconsistent recording.
 *
 * What a recording does not hold is answered minimally, so other indexers can replay it too:
 * - `eth_getBlockByNumber(n, true)` / `eth_getBlockByHash(h, true)` give one transaction object
 *   per transaction that left a log, built from its logs: hash, block, index, `to` = the address
 *   of its first log, and zeros for what was not recorded (`from`, value, gas, input, signature);
 * - the block before the first recorded one (a client asks for it to anchor its sync) is a
 *   synthetic parent: that number, the hash the first block names as its parent, a zero
 *   parentHash, the first block's timestamp minus one, no transactions and no logs.
 */
import type { BlockRecord, MetaRecord, RecordedLog } from "../recording/format.js"
import { readRecords } from "../recording/io.js"
import { bloomOf, memoizedBloomBits } from "../../pipeline/source/bloom.js"

export interface RpcRequest {
  readonly method: string
  readonly params?: ReadonlyArray<unknown> | undefined
}

/** A JSON-RPC error as nodes return it. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string
  ) {
    super(message)
  }
}

type HeadEvent = BlockRecord | { readonly t: "finalized"; readonly number: number }

export interface ReplayOptions {
  /** Without recorded `finalized` records, finalized = head - finalityDepth. Default 12. */
  readonly finalityDepth?: number
}

const hex = (n: number | bigint) => `0x${n.toString(16)}`
const ZERO_HASH = `0x${"0".repeat(64)}`

/**
 * Each served block's logsBloom: the one its record carries (a node's header, or the synthetic
 * generator's), else computed from its recorded logs (the watched contracts' logs: all a client
 * checks a bloom against), once per block.
 */
const blooms = new WeakMap<BlockRecord, string>()
const bitsOf = memoizedBloomBits()
const bloomOfBlock = (block: BlockRecord) => {
  if (block.logsBloom !== undefined) return block.logsBloom
  let bloom = blooms.get(block)
  if (bloom === undefined) blooms.set(block, (bloom = bloomOf(block.logs, bitsOf)))
  return bloom
}

export class ReplayChain {
  private readonly canonical: Array<BlockRecord> = []
  private readonly byHash = new Map<string, BlockRecord>()
  private base = 0
  private cursor = 0
  private recordedFinalized = -1
  private reorgs = 0

  constructor(
    readonly meta: MetaRecord,
    private readonly events: ReadonlyArray<HeadEvent>,
    private readonly options: ReplayOptions = {}
  ) {}

  /** Loads a whole recording (the chain starts with nothing played). */
  static async load(path: string, options: ReplayOptions = {}): Promise<ReplayChain> {
    let meta: MetaRecord | undefined
    const events: Array<HeadEvent> = []
    for await (const record of readRecords(path)) {
      if (record.t === "meta") {
        if (meta !== undefined) throw new Error(`${path}: more than one meta record`)
        meta = record
      } else {
        if (meta === undefined) throw new Error(`${path}: the first record must be meta`)
        events.push(record)
      }
    }
    if (meta === undefined) throw new Error(`${path}: empty recording`)
    return new ReplayChain(meta, events, options)
  }

  get chainId(): number {
    return this.meta.chainId
  }

  /** Head events not yet played. */
  get remaining(): number {
    return this.events.length - this.cursor
  }

  /** Number of reorgs played so far. */
  get reorgCount(): number {
    return this.reorgs
  }

  get head(): BlockRecord | undefined {
    return this.canonical[this.canonical.length - 1]
  }

  get headNumber(): number {
    return this.base + this.canonical.length - 1
  }

  get finalizedNumber(): number {
    if (this.canonical.length === 0) return -1
    const byDepth = this.headNumber - (this.options.finalityDepth ?? 12)
    const finalized = this.recordedFinalized >= 0 ? this.recordedFinalized : byDepth
    return Math.min(this.headNumber, Math.max(finalized, this.base - 1))
  }

  /** Plays up to `count` head events; returns how many were played. */
  advance(count = 1): number {
    let played = 0
    while (played < count && this.cursor < this.events.length) {
      this.apply(this.events[this.cursor]!)
      this.cursor++
      played++
    }
    return played
  }

  /** Plays everything left. */
  advanceAll(): number {
    return this.advance(Number.POSITIVE_INFINITY)
  }

  private apply(event: HeadEvent): void {
    if (event.t === "finalized") {
      this.recordedFinalized = Math.max(this.recordedFinalized, event.number)
      return
    }
    if (this.canonical.length === 0) {
      this.base = event.number
    } else if (event.number <= this.headNumber) {
      if (event.number <= this.finalizedNumber) {
        throw new Error(`recording reorgs block ${event.number}, at or below finalized block ${this.finalizedNumber}`)
      }
      for (const dropped of this.canonical.splice(event.number - this.base)) this.byHash.delete(dropped.hash)
      this.reorgs++
    } else if (event.number !== this.headNumber + 1) {
      throw new Error(`recording skips from block ${this.headNumber} to ${event.number}`)
    }
    const parent = this.canonical[event.number - this.base - 1]
    if (parent !== undefined && parent.hash !== event.parentHash) {
      throw new Error(`recording block ${event.number} names parent ${event.parentHash}, but block ${parent.number} is ${parent.hash}`)
    }
    this.canonical.push(event)
    this.byHash.set(event.hash, event)
  }

  /** The canonical block with this number, if played. */
  blockAt(number: number): BlockRecord | undefined {
    return number < this.base ? undefined : this.canonical[number - this.base]
  }

  /** Answers one JSON-RPC call; throws RpcError as a node would answer an error. */
  request({ method, params = [] }: RpcRequest): unknown {
    switch (method) {
      case "eth_chainId":
        return hex(this.chainId)
      case "net_version":
        return String(this.chainId)
      case "eth_blockNumber":
        return hex(Math.max(this.headNumber, 0))
      case "eth_getBlockByNumber": {
        const number = this.blockTag(params[0], "block")
        const block = number === undefined ? undefined : (this.blockAt(number) ?? this.parentOfFirst(number))
        return block === undefined ? null : this.formatBlock(block, params[1] === true)
      }
      case "eth_getBlockByHash": {
        const hash = this.hash(params[0], "block hash")
        const block = this.byHash.get(hash) ?? (hash === this.canonical[0]?.parentHash ? this.parentOfFirst(this.base - 1) : undefined)
        return block === undefined ? null : this.formatBlock(block, params[1] === true)
      }
      case "eth_getLogs":
        return this.getLogs(params[0])
      case "eth_getBlockReceipts": {
        const block = this.blockByTagOrHash(params[0])
        return block === undefined ? null : this.receipts(block)
      }
      default:
        throw new RpcError(-32601, `the method ${method} does not exist/is not available`)
    }
  }

  /** The synthetic parent of the first recorded block, when `number` is its number (see above). */
  private parentOfFirst(number: number): BlockRecord | undefined {
    const first = this.canonical[0]
    if (first === undefined || number !== this.base - 1 || number < 0) return undefined
    return { t: "block", number, hash: first.parentHash, parentHash: ZERO_HASH, timestamp: Math.max(0, first.timestamp - 1), logs: [] }
  }

  private blockTag(tag: unknown, what: string): number | undefined {
    if (this.canonical.length === 0) return undefined
    switch (tag) {
      case undefined:
      case "latest":
      case "pending":
        return this.headNumber
      case "safe":
      case "finalized":
        return this.finalizedNumber < this.base ? undefined : this.finalizedNumber
      case "earliest":
        return this.base
    }
    if (typeof tag === "string" && /^0x[0-9a-fA-F]+$/.test(tag)) return Number.parseInt(tag, 16)
    throw new RpcError(-32602, `invalid ${what}: ${JSON.stringify(tag)}`)
  }

  private hash(value: unknown, what: string): string {
    if (typeof value === "string" && /^0x[0-9a-fA-F]{64}$/.test(value)) return value.toLowerCase()
    throw new RpcError(-32602, `invalid ${what}: ${JSON.stringify(value)}`)
  }

  private formatBlock(block: BlockRecord, fullTransactions: boolean) {
    const hashes = [...new Set(block.logs.map((log) => log.transactionHash))]
    return {
      number: hex(block.number),
      hash: block.hash,
      parentHash: block.parentHash,
      timestamp: hex(block.timestamp),
      nonce: "0x0000000000000000",
      sha3Uncles: ZERO_HASH,
      logsBloom: bloomOfBlock(block),
      transactionsRoot: ZERO_HASH,
      stateRoot: ZERO_HASH,
      receiptsRoot: ZERO_HASH,
      miner: `0x${"0".repeat(40)}`,
      difficulty: "0x0",
      totalDifficulty: "0x0",
      extraData: "0x",
      size: "0x0",
      gasLimit: "0x0",
      gasUsed: "0x0",
      baseFeePerGas: "0x0",
      transactions: fullTransactions ? hashes.map((hash) => this.formatTransaction(block, hash)) : hashes,
      uncles: []
    }
  }

  /** A transaction as far as its logs tell (see the module comment); legacy type, zero signature. */
  private formatTransaction(block: BlockRecord, hash: string) {
    const first = block.logs.find((log) => log.transactionHash === hash)!
    return {
      hash,
      blockHash: block.hash,
      blockNumber: hex(block.number),
      transactionIndex: hex(first.transactionIndex),
      from: `0x${"0".repeat(40)}`,
      to: first.address,
      input: "0x",
      value: "0x0",
      nonce: "0x0",
      gas: "0x0",
      gasPrice: "0x0",
      type: "0x0",
      chainId: hex(this.chainId),
      v: "0x0",
      r: "0x0",
      s: "0x0"
    }
  }

  /** A block named by number, tag or hash (eth_getBlockReceipts takes any of them). */
  private blockByTagOrHash(id: unknown): BlockRecord | undefined {
    if (typeof id === "string" && id.length === 66) return this.byHash.get(this.hash(id, "block hash"))
    const number = this.blockTag(id, "block")
    return number === undefined ? undefined : this.blockAt(number)
  }

  /** Receipts of the block's transactions with their recorded logs (recordings keep no other receipt fields). */
  private receipts(block: BlockRecord) {
    const byTx = new Map<string, Array<RecordedLog>>()
    for (const log of block.logs) {
      let logs = byTx.get(log.transactionHash)
      if (logs === undefined) byTx.set(log.transactionHash, (logs = []))
      logs.push(log)
    }
    return [...byTx].map(([transactionHash, logs]) => ({
      transactionHash,
      transactionIndex: hex(logs[0]!.transactionIndex),
      blockHash: block.hash,
      blockNumber: hex(block.number),
      status: "0x1",
      logsBloom: bloomOf(logs, bitsOf),
      logs: logs.map((log) => this.formatLog(block, log))
    }))
  }

  private getLogs(filter: unknown) {
    if (typeof filter !== "object" || filter === null) throw new RpcError(-32602, "eth_getLogs expects a filter object")
    const f = filter as { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown; address?: unknown; topics?: unknown }
    const addresses = this.addressFilter(f.address)
    const topics = this.topicFilter(f.topics)
    let blocks: Array<BlockRecord>
    if (f.blockHash !== undefined) {
      if (f.fromBlock !== undefined || f.toBlock !== undefined) {
        throw new RpcError(-32602, "cannot specify both blockHash and fromBlock/toBlock")
      }
      const block = this.byHash.get(this.hash(f.blockHash, "blockHash"))
      if (block === undefined) throw new RpcError(-32000, `unknown block ${String(f.blockHash)}`)
      blocks = [block]
    } else {
      const from = this.blockTag(f.fromBlock ?? "latest", "fromBlock")
      const to = this.blockTag(f.toBlock ?? "latest", "toBlock")
      if (from === undefined || to === undefined) return []
      if (from > to) throw new RpcError(-32602, `invalid block range: fromBlock ${from} is after toBlock ${to}`)
      blocks = []
      for (let n = Math.max(from, this.base); n <= Math.min(to, this.headNumber); n++) blocks.push(this.canonical[n - this.base]!)
    }
    const out: Array<ReturnType<ReplayChain["formatLog"]>> = []
    for (const block of blocks) {
      for (const log of block.logs) {
        if (addresses !== undefined && !addresses.has(log.address.toLowerCase())) continue
        if (!matchesTopics(log, topics)) continue
        out.push(this.formatLog(block, log))
      }
    }
    return out
  }

  private addressFilter(address: unknown): Set<string> | undefined {
    if (address === undefined || address === null) return undefined
    const list = Array.isArray(address) ? address : [address]
    return new Set(
      list.map((a) => {
        if (typeof a !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(a)) throw new RpcError(-32602, `invalid address ${JSON.stringify(a)}`)
        return a.toLowerCase()
      })
    )
  }

  private topicFilter(topics: unknown): ReadonlyArray<Set<string> | null> {
    if (topics === undefined || topics === null) return []
    if (!Array.isArray(topics)) throw new RpcError(-32602, "topics must be an array")
    return topics.map((position) => {
      if (position === null) return null
      const list = Array.isArray(position) ? position : [position]
      return new Set(list.map((t) => this.hash(t, "topic")))
    })
  }

  private formatLog(block: BlockRecord, log: RecordedLog) {
    return {
      address: log.address,
      topics: log.topics,
      data: log.data,
      blockNumber: hex(block.number),
      blockHash: block.hash,
      transactionHash: log.transactionHash,
      transactionIndex: hex(log.transactionIndex),
      logIndex: hex(log.logIndex),
      blockTimestamp: hex(block.timestamp),
      removed: false
    }
  }
}

const matchesTopics = (log: RecordedLog, filter: ReadonlyArray<Set<string> | null>): boolean => {
  for (let i = 0; i < filter.length; i++) {
    const wanted = filter[i]
    if (wanted === null || wanted === undefined) continue
    const topic = log.topics[i]
    if (topic === undefined || !wanted.has(topic.toLowerCase())) return false
  }
  return true
}
