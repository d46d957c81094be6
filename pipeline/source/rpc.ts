/**
 * The chain source: JSON-RPC over HTTP as Effects with typed failures and retries.
 *
 * Every answer is checked before it is trusted: a header must carry number, hash, parentHash
 * and timestamp; a log must carry its block coordinates; a body that is not JSON (truncated,
 * an HTML error page) is a ServerError. Transient failures (see `isTransient`) are retried with
 * exponential, jittered, capped backoff; the rest surface to the caller, which for range errors
 * shrinks the range instead.
 */
import { Duration, Effect, Metric, Schedule } from "effect"
import { promisify } from "node:util"
import { brotliDecompress, gunzip, inflate } from "node:zlib"
import { Agent, request } from "undici"
import { rpcErrors } from "../metrics.js"
import { parseBloom } from "./bloom.js"
import type { BlockHeader } from "./block-header.js"
import type { ChainLog } from "./chain-log.js"
import { readHeadersAnswer } from "./headers-answer.js"
import { readLogsAnswer } from "./logs-answer.js"
import {
  type ChainError,
  classify,
  InconsistentAnswer,
  isTransient,
  RequestRejected,
  ServerError,
  Timeout,
  UnknownBlock
} from "./errors.js"

export type { BlockHeader } from "./block-header.js"

export interface RpcOptions {
  readonly url: string
  readonly timeout?: Duration.DurationInput
  /** Attempts for a transient failure before it surfaces. */
  readonly retries?: number
}

/** An HTTP node as plain data, for a thread to build its own client with `makeRpc(rpcOptionsOf(t))`. */
export interface Transport {
  readonly url: string
  readonly timeoutMs: number
  readonly retries: number
}

export const rpcOptionsOf = (t: Transport): RpcOptions => ({ url: t.url, timeout: Duration.millis(t.timeoutMs), retries: t.retries })

/** Exponential from 100 ms, jittered, each pause capped at `cap`; never ends by itself. */
export const backoffUpTo = (cap: Duration.DurationInput) =>
  Schedule.exponential("100 millis", 2).pipe(
    Schedule.jittered,
    Schedule.modifyDelay((d) => Duration.min(d, cap))
  )

/** `backoffUpTo` 5 s. */
export const backoff = backoffUpTo(Duration.seconds(5))

/** `backoff`, `retries` times at most. */
export const retrySchedule = (retries: number) => backoff.pipe(Schedule.intersect(Schedule.recurs(retries)))

const HEX = /^0x[0-9a-f]*$/i
const HASH = /^0x[0-9a-f]{64}$/i

const quantity = (value: unknown, what: string): number => {
  if (typeof value !== "string" || !HEX.test(value) || value.length < 3)
    throw new InconsistentAnswer({ message: `${what} is not a hex quantity: ${JSON.stringify(value)}` })
  return Number.parseInt(value, 16)
}

const hash = (value: unknown, what: string): string => {
  if (typeof value !== "string" || !HASH.test(value))
    throw new InconsistentAnswer({ message: `${what} is not a 32-byte hash: ${JSON.stringify(value)}` })
  return value.toLowerCase()
}

export const parseHeader = (raw: unknown): BlockHeader => {
  const b = raw as Record<string, unknown>
  return {
    number: quantity(b["number"], "block number"),
    hash: hash(b["hash"], "block hash"),
    parentHash: hash(b["parentHash"], "parentHash"),
    timestamp: quantity(b["timestamp"], "timestamp"),
    logsBloom: parseBloom(b["logsBloom"])
  }
}

export const parseLog = (raw: unknown): ChainLog => {
  const l = raw as Record<string, unknown>
  const topics = l["topics"]
  if (typeof l["address"] !== "string" || !Array.isArray(topics) || typeof l["data"] !== "string") {
    throw new InconsistentAnswer({ message: `log lacks address, topics or data: ${JSON.stringify(raw).slice(0, 200)}` })
  }
  if (l["removed"] === true) throw new InconsistentAnswer({ message: "log marked removed in a range answer" })
  const checked: Array<string> = []
  for (let i = 0; i < topics.length; i++) checked.push(hash(topics[i], "a topic"))
  const timestamp = l["blockTimestamp"]
  // One object shape for every log (blockTimestamp always present, maybe undefined).
  return {
    address: (l["address"] as string).toLowerCase(),
    topics: checked,
    data: (l["data"] as string).toLowerCase(),
    blockNumber: quantity(l["blockNumber"], "log blockNumber"),
    blockHash: hash(l["blockHash"], "log blockHash"),
    logIndex: quantity(l["logIndex"], "logIndex"),
    transactionHash: hash(l["transactionHash"], "transactionHash"),
    transactionIndex: quantity(l["transactionIndex"], "transactionIndex"),
    blockTimestamp: timestamp === undefined || timestamp === null ? undefined : quantity(timestamp, "log blockTimestamp")
  }
}

const hex = (n: number) => `0x${n.toString(16)}`

/** Logs `readLogsAnswer` read from an answer's bytes, already checked as `parseLog` checks them. */
class ReadLogs {
  constructor(readonly logs: Array<ChainLog>) {}
}

/**
 * A reader of an exchange's answer straight from its bytes: one result per request id, in their
 * order, each what the exchange's `parse` takes; undefined to take the general path instead.
 */
type Fast = (bytes: Buffer, ids: ReadonlyArray<number>) => Array<unknown> | undefined

const readLogs: Fast = (bytes, ids) => {
  const logs = ids.length === 1 ? readLogsAnswer(bytes, ids[0]!) : undefined
  return logs === undefined ? undefined : [new ReadLogs(logs)]
}

/** A header `readHeadersAnswer` read from an answer's bytes, already checked as `parseHeader` checks it. */
class ReadHeader {
  constructor(readonly header: BlockHeader) {}
}

const readHeaders: Fast = (bytes, ids) => readHeadersAnswer(bytes, ids)?.map((h) => new ReadHeader(h))

/** The logs of an eth_getLogs result: read from the bytes already, or checked here. */
const logsOf = ([r]: Array<unknown>): Array<ChainLog> => {
  if (r instanceof ReadLogs) return r.logs
  if (!Array.isArray(r)) throw new InconsistentAnswer({ message: "eth_getLogs answered something other than a list" })
  return r.map(parseLog)
}

/**
 * The HTTP client of every node connection in this thread: undici's own request API, with
 * keep-alive. Not `fetch` (undici's too, under WHATWG streams): reading the same 495 MB of
 * eth_getLogs and header answers from the replay node took 1.2-1.3 s of CPU with `request`
 * against 2.9 s with `fetch` (three passes over 59 ranges of 1,000 blocks of the 1M chain), and
 * reading answers is most of what the backfill thread does besides decoding. On the 1M chain
 * (`npm start`, three alternated pairs) the backfill thread took 10.2-10.8 s of CPU against
 * 11.2-11.5 s, wall 18.0-18.7 s against 19.1-19.7 s. It asks for compressed answers as `fetch`
 * did (a remote node's bandwidth matters more than the CPU to inflate them).
 */
const agent = new Agent({ keepAliveTimeout: 10_000 })

/** Decoders of the bodies a node may compress, as `fetch` reads them (it asks for all three). */
const DECOMPRESS: Readonly<Record<string, (body: Buffer) => Promise<Buffer>>> = {
  gzip: promisify(gunzip),
  "x-gzip": promisify(gunzip),
  deflate: promisify(inflate),
  br: promisify(brotliDecompress)
}

/** POSTs a JSON body; the answer's status and bytes (decompressed). */
const post = async (url: string, body: string, signal: AbortSignal) => {
  const response = await request(url, {
    method: "POST",
    headers: { "content-type": "application/json", "accept-encoding": "gzip, deflate, br" },
    body,
    signal,
    dispatcher: agent
  })
  let bytes: Buffer = Buffer.from(await response.body.arrayBuffer())
  const encoding = response.headers["content-encoding"]
  if (typeof encoding === "string" && encoding !== "identity") {
    const decompress = DECOMPRESS[encoding.trim().toLowerCase()]
    if (decompress === undefined) throw new ServerError({ message: `an answer in an encoding this client cannot read: ${encoding}` })
    bytes = await decompress(bytes)
  }
  return { status: response.statusCode, ok: response.statusCode >= 200 && response.statusCode < 300, bytes }
}

export const makeRpc = (options: RpcOptions) => {
  const timeout = options.timeout ?? "15 seconds"
  let id = 0
  /**
   * Milliseconds this client spent reading answers (bytes to checked values: the byte reader, or
   * JSON.parse and the checks) since it was made; progress lines and benchmarks read it.
   */
  const timings = { readMs: 0 }
  const timedRead = <A>(read: () => A): A => {
    const started = performance.now()
    try {
      return read()
    } finally {
      timings.readMs += performance.now() - started
    }
  }

  /**
   * One exchange; never retried here. Many calls go out as one batch. `fast` may read the answer
   * straight from the bytes (`logs-answer.ts`, `headers-answer.ts`); when it returns undefined the
   * answer is decoded and checked the general way.
   */
  const exchange = (calls: ReadonlyArray<{ readonly method: string; readonly params: ReadonlyArray<unknown> }>, fast?: Fast) =>
    Effect.tryPromise({
      try: async (signal) => {
        const body = calls.map((c) => ({ jsonrpc: "2.0", id: ++id, method: c.method, params: c.params }))
        const response = await post(options.url, JSON.stringify(body.length === 1 ? body[0] : body), signal)
        const bytes = response.bytes
        if (response.ok && fast !== undefined) {
          const results = timedRead(() =>
            fast(
              bytes,
              body.map((b) => b.id)
            )
          )
          if (results !== undefined) return results
        }
        const text = bytes.toString("utf8")
        if (!response.ok) {
          throw classify({ httpStatus: response.status, message: `HTTP ${response.status}: ${text.slice(0, 300)}` })
        }
        let json: unknown
        try {
          json = timedRead(() => JSON.parse(text))
        } catch {
          throw new ServerError({ message: `unreadable answer (${text.length} bytes): ${text.slice(0, 120)}` })
        }
        const answers = (Array.isArray(json) ? json : [json]) as Array<{
          id?: number
          result?: unknown
          error?: { code?: number; message?: string }
        }>
        const byId = new Map(answers.map((a) => [a.id, a]))
        return body.map((request) => {
          // A lone answer to a lone request is taken even if a proxy rewrote its id.
          const answer = body.length === 1 && answers.length === 1 ? answers[0] : byId.get(request.id)
          if (answer === undefined) throw new InconsistentAnswer({ message: `${request.method}: no answer in the batch` })
          if (answer.error !== undefined) {
            throw classify({
              ...(answer.error.code === undefined ? {} : { code: answer.error.code }),
              message: answer.error.message ?? "unknown error"
            })
          }
          if (!("result" in answer)) throw new InconsistentAnswer({ message: `${request.method}: answer without result` })
          return answer.result
        })
      },
      catch: (error): ChainError =>
        typeof error === "object" && error !== null && "_tag" in error
          ? (error as ChainError)
          : (error as Error).name === "AbortError"
            ? new Timeout({ message: "request aborted" })
            : new ServerError({ message: `transport: ${(error as Error).message}` })
    }).pipe(
      Effect.timeoutFail({
        duration: timeout,
        onTimeout: () => new Timeout({ message: `no answer within ${Duration.format(Duration.decode(timeout))}` })
      })
    )

  /** Retries transient failures; parse failures of a well-formed exchange count as inconsistent answers. */
  const call = <A>(
    calls: ReadonlyArray<{ readonly method: string; readonly params: ReadonlyArray<unknown> }>,
    parse: (results: Array<unknown>) => A,
    fast?: Fast
  ) =>
    exchange(calls, fast).pipe(
      Effect.flatMap((results) =>
        Effect.try({
          try: () => timedRead(() => parse(results)),
          catch: (error) =>
            error instanceof InconsistentAnswer || error instanceof UnknownBlock || error instanceof RequestRejected
              ? error
              : new InconsistentAnswer({ message: String(error) })
        })
      ),
      // Every failed attempt counts, a retried one included: a flaky node shows before it fails us.
      Effect.tapError((error) => Metric.increment(rpcErrors(error._tag))),
      Effect.retry({ schedule: retrySchedule(options.retries ?? 6), while: isTransient })
    )

  const headerOrUnknown = (what: string) => (raw: unknown) => {
    if (raw instanceof ReadHeader) return raw.header
    if (raw === null || raw === undefined) throw new UnknownBlock({ message: `${what} is not available` })
    return parseHeader(raw)
  }

  return {
    timings: timings as { readonly readMs: number },
    /** How to reach the same node from another thread (the backfill thread rebuilds the client). */
    transport: {
      url: options.url,
      timeoutMs: Duration.toMillis(Duration.decode(timeout)),
      retries: options.retries ?? 6
    } satisfies Transport,
    chainId: call([{ method: "eth_chainId", params: [] }], ([r]) => quantity(r, "chain id")),
    /** The header at a tag or number; UnknownBlock when the node does not have it. */
    header: (block: number | "latest" | "finalized" | "safe") =>
      call([{ method: "eth_getBlockByNumber", params: [typeof block === "number" ? hex(block) : block, false] }], ([r]) => {
        // No `finalized`/`safe` block is an answer, not a lag: the node has none (yet), and
        // asking again will not make one. The caller falls back to a confirmation depth.
        if ((block === "finalized" || block === "safe") && (r === null || r === undefined)) {
          throw new RequestRejected({ message: `the node has no ${block} block` })
        }
        return headerOrUnknown(`block ${block}`)(r)
      }),
    headerByHash: (blockHash: string) =>
      call([{ method: "eth_getBlockByHash", params: [blockHash, false] }], ([r]) => headerOrUnknown(`block ${blockHash}`)(r)),
    /** Headers [from, to] in one batched exchange per 100 blocks, checked to chain by parentHash. */
    headers: (from: number, to: number) =>
      Effect.forEach(
        Array.from({ length: Math.ceil((to - from + 1) / 100) }, (_, i) => from + i * 100),
        (start) => {
          const end = Math.min(to, start + 99)
          const calls = Array.from({ length: end - start + 1 }, (_, i) => ({
            method: "eth_getBlockByNumber",
            params: [hex(start + i), false]
          }))
          return call(calls, (results) => results.map((r, i) => headerOrUnknown(`block ${start + i}`)(r)), readHeaders)
        },
        { concurrency: 4 }
      ).pipe(
        Effect.map((chunks) => chunks.flat()),
        Effect.flatMap((headers) => {
          for (let i = 0; i < headers.length; i++) {
            if (headers[i]!.number !== from + i)
              return Effect.fail(new InconsistentAnswer({ message: `asked for block ${from + i}, got ${headers[i]!.number}` }))
            if (i > 0 && headers[i]!.parentHash !== headers[i - 1]!.hash) {
              return Effect.fail(
                new InconsistentAnswer({ message: `block ${from + i} does not follow block ${from + i - 1} (the chain moved)` })
              )
            }
          }
          return Effect.succeed(headers)
        })
      ),
    /** Headers of the given block numbers, 100 per batched exchange. */
    headersAt: (numbers: ReadonlyArray<number>) =>
      Effect.forEach(
        Array.from({ length: Math.ceil(numbers.length / 100) }, (_, i) => numbers.slice(i * 100, i * 100 + 100)),
        (group) =>
          call(
            group.map((n) => ({ method: "eth_getBlockByNumber", params: [hex(n), false] })),
            (results) => results.map((r, i) => headerOrUnknown(`block ${group[i]}`)(r)),
            readHeaders
          ),
        { concurrency: 4 }
      ).pipe(Effect.map((chunks) => chunks.flat())),
    /** Logs of `addresses` in [from, to]; a RangeTooLarge surfaces for the caller to shrink. */
    logs: (addresses: ReadonlyArray<string>, from: number, to: number) =>
      call([{ method: "eth_getLogs", params: [{ address: addresses, fromBlock: hex(from), toBlock: hex(to) }] }], logsOf, readLogs),
    logsAtHash: (addresses: ReadonlyArray<string>, blockHash: string) =>
      call([{ method: "eth_getLogs", params: [{ address: addresses, blockHash }] }], logsOf, readLogs),
    /** Every log of the block's receipts (all contracts); UnknownBlock when the node does not have it. */
    receiptLogs: (blockHash: string) =>
      call([{ method: "eth_getBlockReceipts", params: [blockHash] }], ([r]) => {
        if (r === null || r === undefined) throw new UnknownBlock({ message: `receipts of block ${blockHash} are not available` })
        if (!Array.isArray(r)) throw new InconsistentAnswer({ message: "eth_getBlockReceipts answered something other than a list" })
        return r.flatMap((receipt: { logs?: unknown }) => {
          if (!Array.isArray(receipt?.logs)) throw new InconsistentAnswer({ message: "a receipt without logs" })
          return receipt.logs.map(parseLog)
        })
      })
  }
}

export type Rpc = ReturnType<typeof makeRpc>
