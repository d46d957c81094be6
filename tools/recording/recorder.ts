/**
 * Records a chain from any JSON-RPC endpoint into the recording format (see format.ts).
 *
 * What is recorded: every header from `fromBlock` on, and the logs of the deployment's contracts
 * plus the outcome tokens their `MarketCreated` events announce (watched from the block they
 * appear in). Pools need no discovery: the pool manager's own logs are recorded.
 *
 * Two ways to move forward, both through `poll`:
 * - catch-up: up to the target in chunks (logs by range, headers by batched calls), each chunk
 *   checked for consistency (every log's blockHash must be the header's hash; otherwise the
 *   chunk is fetched again), written in block order;
 * - following: each new head is reconciled against the recorded tip; a head whose ancestry
 *   differs is a reorg, recorded by writing the replacing blocks from the common ancestor up,
 *   so a replay sees the reorg as it happened.
 *
 * Memory is bounded by one chunk plus the window of recent hashes kept for reorg detection.
 * Resuming reads the existing file, keeps its valid records (a member cut short by a crash is
 * dropped by rewriting the file) and continues after its last block.
 */
import * as fs from "node:fs/promises"
import * as zlib from "node:zlib"
import * as readline from "node:readline"
import { createReadStream } from "node:fs"
import type { Deployment } from "../../schema/deployment.js"
import { COMPONENTS } from "../../schema/components.js"
import { announcedTokens } from "../../pipeline/decode.js"
import { BLOOM_HEX } from "../../pipeline/source/bloom.js"
import { type BlockRecord, FORMAT_VERSION, type MetaRecord, parseRecord, type Record, type RecordedLog } from "./format.js"
import { type RecordWriter, writeRecords } from "./io.js"

/** How many recent block hashes are kept to find a common ancestor after a reorg. */
const REORG_WINDOW = 512

export interface RecorderOptions {
  readonly rpcUrl: string
  readonly deployment: Deployment
  readonly out: string
  /** First block to record; default the deployment's deployBlock. */
  readonly fromBlock?: number
  /** Blocks per eth_getLogs call during catch-up. Default 2000. */
  readonly chunkBlocks?: number
  readonly source?: string
  readonly onProgress?: (progress: Progress) => void
}

export interface Progress {
  readonly block: number
  readonly target: number
  readonly blocksPerSecond: number
  readonly logs: number
}

interface RawBlock {
  readonly number: string
  readonly hash: string
  readonly parentHash: string
  readonly timestamp: string
  readonly logsBloom?: string
}

interface RawLog {
  readonly address: string
  readonly topics: ReadonlyArray<string>
  readonly data: string
  readonly blockNumber: string
  readonly blockHash: string
  readonly logIndex: string
  readonly transactionHash: string
  readonly transactionIndex: string
}

/** Minimal JSON-RPC client: single and batch calls, retried a few times on transport errors. */
export class Rpc {
  private id = 0
  constructor(readonly url: string) {}

  async call<T>(method: string, params: ReadonlyArray<unknown> = []): Promise<T> {
    const [result] = await this.batch<T>([{ method, params }])
    return result as T
  }

  async batch<T>(calls: ReadonlyArray<{ readonly method: string; readonly params: ReadonlyArray<unknown> }>): Promise<Array<T>> {
    if (calls.length === 0) return []
    const body = calls.map((c) => ({ jsonrpc: "2.0", id: ++this.id, method: c.method, params: c.params }))
    for (let attempt = 0; ; attempt++) {
      try {
        const response = await fetch(this.url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body)
        })
        const json = (await response.json()) as Array<{ id: number; result?: T; error?: { code: number; message: string } }>
        const answers = Array.isArray(json) ? json : [json]
        const byId = new Map(answers.map((a) => [a.id, a]))
        return body.map((request) => {
          const a = byId.get(request.id)
          if (a === undefined) throw new Error(`${request.method}: no answer`)
          if (a.error !== undefined) throw new Error(`${request.method}: ${a.error.message} (${a.error.code})`)
          return a.result as T
        })
      } catch (error) {
        if (attempt >= 4) throw error
        await new Promise((r) => setTimeout(r, 100 * 2 ** attempt))
      }
    }
  }
}

const num = (hex: string) => Number.parseInt(hex, 16)

const toRecordedLog = (log: RawLog): RecordedLog => ({
  address: log.address.toLowerCase(),
  topics: log.topics.map((t) => t.toLowerCase()),
  data: log.data.toLowerCase(),
  logIndex: num(log.logIndex),
  transactionHash: log.transactionHash.toLowerCase(),
  transactionIndex: num(log.transactionIndex)
})

/** Reads the valid prefix of a recording; `complete` is false when its end was cut short. */
const readPrefix = async (path: string): Promise<{ records: Array<Record>; complete: boolean }> => {
  const records: Array<Record> = []
  const input = createReadStream(path).pipe(zlib.createGunzip())
  const lines = readline.createInterface({ input, crlfDelay: Infinity })
  let lineNumber = 0
  let pending: string | undefined
  try {
    for await (const line of lines) {
      if (pending !== undefined) records.push(parseRecord(pending, lineNumber))
      lineNumber++
      pending = line.trim() === "" ? undefined : line
    }
    if (pending !== undefined) records.push(parseRecord(pending, lineNumber))
    return { records, complete: true }
  } catch {
    // The last line before a truncation may itself be partial: it is dropped with the tail.
    return { records, complete: false }
  }
}

/** The endpoint's chain left the recorded one below the window of hashes kept: no later poll can mend that. */
export class ReorgBeyondWindow extends Error {}

export class Recorder {
  private writer: RecordWriter | undefined
  private readonly watched = new Set<string>()
  /** Recorded canonical hashes of the most recent blocks, by number. */
  private readonly recent = new Map<number, string>()
  private tip = -1
  private finalized = -1
  private logCount = 0
  private readonly rpc: Rpc

  private constructor(private readonly options: RecorderOptions) {
    this.rpc = new Rpc(options.rpcUrl)
    for (const component of COMPONENTS) this.watched.add(options.deployment[component].toLowerCase())
  }

  /** Opens (or resumes) a recording. */
  static async open(options: RecorderOptions): Promise<Recorder> {
    const recorder = new Recorder(options)
    await recorder.start()
    return recorder
  }

  /** Last recorded block number (-1 before the first). */
  get recordedTip(): number {
    return this.tip
  }

  get watchedAddresses(): ReadonlyArray<string> {
    return [...this.watched]
  }

  private async start(): Promise<void> {
    const chainId = num(await this.rpc.call<string>("eth_chainId"))
    const exists = await fs.access(this.options.out).then(
      () => true,
      () => false
    )
    if (exists) {
      const { records, complete } = await readPrefix(this.options.out)
      const meta = records[0]
      if (meta?.t !== "meta") throw new Error(`${this.options.out}: not a recording (no meta record first)`)
      if (meta.chainId !== chainId) throw new Error(`${this.options.out}: recorded chain ${meta.chainId}, endpoint is chain ${chainId}`)
      if (meta.deployment.diamond !== this.options.deployment.diamond) {
        throw new Error(`${this.options.out}: recorded for another deployment (diamond ${meta.deployment.diamond})`)
      }
      for (const record of records) this.remember(record)
      if (!complete) {
        // Rewrite the valid prefix so the file is a clean sequence of complete gzip members.
        const tmp = `${this.options.out}.tmp`
        const rewrite = writeRecords(tmp)
        for (const record of records) await rewrite.write(record)
        await rewrite.close()
        await fs.rename(tmp, this.options.out)
      }
      this.writer = writeRecords(this.options.out, { append: true })
      return
    }
    const meta: MetaRecord = {
      t: "meta",
      version: FORMAT_VERSION,
      chainId,
      deployment: this.options.deployment,
      source: this.options.source ?? `recorded from ${new URL(this.options.rpcUrl).host}`
    }
    this.writer = writeRecords(this.options.out)
    await this.writer.write(meta)
  }

  private remember(record: Record): void {
    if (record.t === "finalized") {
      this.finalized = Math.max(this.finalized, record.number)
      return
    }
    if (record.t !== "block") return
    if (record.number <= this.tip) for (let n = record.number; n <= this.tip; n++) this.recent.delete(n)
    this.tip = record.number
    this.recent.set(record.number, record.hash)
    this.recent.delete(record.number - REORG_WINDOW)
    for (const log of record.logs) {
      this.logCount++
      for (const token of announcedTokens(log)) this.watched.add(token)
    }
  }

  private async emit(record: Record): Promise<void> {
    this.remember(record)
    await this.writer!.write(record)
  }

  private async headers(from: number, to: number): Promise<Array<RawBlock>> {
    const out: Array<RawBlock> = []
    for (let start = from; start <= to; start += 100) {
      const calls = []
      for (let n = start; n <= Math.min(to, start + 99); n++)
        calls.push({ method: "eth_getBlockByNumber", params: [`0x${n.toString(16)}`, false] })
      const blocks = await this.rpc.batch<RawBlock | null>(calls)
      blocks.forEach((b, i) => {
        if (b === null) throw new Error(`block ${start + i} is not available from the endpoint`)
        out.push(b)
      })
    }
    return out
  }

  /** Logs of every watched contract in [from, to], following announcements within the range. */
  private async logs(from: number, to: number): Promise<Array<RawLog>> {
    const all: Array<RawLog> = []
    let pending = [...this.watched]
    let start = from
    const seen = new Set(this.watched)
    while (pending.length > 0) {
      const batch = await this.rpc.call<Array<RawLog>>("eth_getLogs", [
        { address: pending, fromBlock: `0x${start.toString(16)}`, toBlock: `0x${to.toString(16)}` }
      ])
      all.push(...batch)
      const fresh: Array<string> = []
      let firstSeen = Number.POSITIVE_INFINITY
      for (const log of batch) {
        for (const token of announcedTokens(log)) {
          if (!seen.has(token)) {
            seen.add(token)
            fresh.push(token)
            firstSeen = Math.min(firstSeen, num(log.blockNumber))
          }
        }
      }
      pending = fresh
      start = firstSeen
    }
    return all.sort((a, b) => num(a.blockNumber) - num(b.blockNumber) || num(a.logIndex) - num(b.logIndex))
  }

  /** Fetches and writes blocks [from, to] in order; refetches the chunk if the chain moved under it. */
  private async recordRange(from: number, to: number): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const [headers, logs] = await Promise.all([this.headers(from, to), this.logs(from, to)])
      const consistent =
        (from === 0 || this.recent.get(from - 1) === undefined || headers[0]!.parentHash === this.recent.get(from - 1)) &&
        headers.every((h, i) => i === 0 || h.parentHash === headers[i - 1]!.hash) &&
        logs.every((l) => headers[num(l.blockNumber) - from]?.hash === l.blockHash)
      if (!consistent) {
        if (attempt >= 5) throw new Error(`blocks ${from}-${to} keep changing while being recorded`)
        continue
      }
      const byBlock = new Map<number, Array<RecordedLog>>()
      for (const log of logs) {
        const n = num(log.blockNumber)
        let list = byBlock.get(n)
        if (list === undefined) byBlock.set(n, (list = []))
        list.push(toRecordedLog(log))
      }
      for (const h of headers) {
        const number = num(h.number)
        const record: BlockRecord = {
          t: "block",
          number,
          hash: h.hash.toLowerCase(),
          parentHash: h.parentHash.toLowerCase(),
          timestamp: num(h.timestamp),
          logs: byBlock.get(number) ?? [],
          // The node's own bloom (every log of the block, watched or not), served as it was.
          ...(typeof h.logsBloom === "string" && BLOOM_HEX.test(h.logsBloom) ? { logsBloom: h.logsBloom.toLowerCase() } : {})
        }
        await this.emit(record)
      }
      return
    }
  }

  /** The recorded block that the endpoint's chain still agrees with, walking down from the tip. */
  private async commonAncestor(): Promise<number> {
    for (let n = this.tip; n >= this.tip - REORG_WINDOW; n--) {
      const mine = this.recent.get(n)
      if (mine === undefined) break
      const theirs = await this.rpc.call<RawBlock | null>("eth_getBlockByNumber", [`0x${n.toString(16)}`, false])
      if (theirs?.hash.toLowerCase() === mine) return n
    }
    throw new ReorgBeyondWindow(`reorg deeper than the recorder's window of ${REORG_WINDOW} blocks below ${this.tip}`)
  }

  /**
   * Brings the recording up to `target` (default: the endpoint's latest block), recording a
   * reorg first when the endpoint's chain no longer contains the recorded tip. A poll that fails
   * (the endpoint gone) can simply be called again: blocks are written only once a whole chunk
   * is fetched and checked, so the recording ends at a block boundary.
   */
  async poll(target?: number): Promise<void> {
    const latest = target ?? num(await this.rpc.call<string>("eth_blockNumber"))
    if (this.tip >= 0) {
      const atTip = await this.rpc.call<RawBlock | null>("eth_getBlockByNumber", [`0x${Math.min(this.tip, latest).toString(16)}`, false])
      const agrees = atTip !== null && atTip.hash.toLowerCase() === this.recent.get(Math.min(this.tip, latest))
      if (!agrees || latest < this.tip) {
        const ancestor = await this.commonAncestor()
        // The replacing blocks are then written from the ancestor up: that is how the reorg is recorded.
        for (const n of [...this.recent.keys()]) if (n > ancestor) this.recent.delete(n)
        this.tip = ancestor
      }
    }
    const from = this.tip < 0 ? (this.options.fromBlock ?? this.options.deployment.deployBlock) : this.tip + 1
    const chunk = this.options.chunkBlocks ?? 2000
    const started = Date.now()
    for (let start = from; start <= latest; start += chunk) {
      const end = Math.min(latest, start + chunk - 1)
      await this.recordRange(start, end)
      const seconds = Math.max((Date.now() - started) / 1000, 0.001)
      this.options.onProgress?.({ block: end, target: latest, blocksPerSecond: (end - from + 1) / seconds, logs: this.logCount })
    }
    await this.pollFinalized()
  }

  /** Records the endpoint's finalized block when it advances (nodes without the tag are skipped). */
  private async pollFinalized(): Promise<void> {
    const block = await this.rpc.call<RawBlock | null>("eth_getBlockByNumber", ["finalized", false]).catch(() => null)
    if (block === null) return
    const number = Math.min(num(block.number), this.tip)
    if (number > this.finalized) await this.emit({ t: "finalized", number })
  }

  async close(): Promise<void> {
    await this.writer?.close()
    this.writer = undefined
  }
}
