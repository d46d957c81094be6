/**
 * bench:ws's client generator (`bench/ws.ts` forks it): COUNT WebSocket clients in one process,
 * client i following trades, prices and the order book of market i mod the markets given, kept
 * lean so that the generator is not what the bench measures:
 * - `ws` sockets without UTF-8 validation or deflate;
 * - no JSON parsing of what arrives: a message is told by its first bytes (the server writes
 *   `type` and `topic` first) and a trades delta's block read from its text;
 * - an arrival is one clock read and an array push; nothing is sent to the bench per message,
 *   only `{done: block}` once every client of the traded market has that block's trades delta.
 * It also LISTENs to the indexer's `predix_indexed` and times each commit's NOTIFY on the same
 * clock as the arrivals (this process is idle when a commit lands: the previous round is over).
 * On `"stats"` it answers its CPU time, the messages it received, the commits and every arrival, by block.
 *
 * Clients connect from 127.0.x.y addresses, 10 per address (the server allows 20), at most 100
 * handshakes at a time.
 *
 * Usage (by bench/ws.ts): node --import tsx bench/ws/clients.ts <url> <count> <market,market,...> <database url>
 */
import pg from "pg"
import WebSocket from "ws"
import { INDEXED_CHANNEL } from "../../schema/indexed-notify.js"

export interface ClientStats {
  readonly cpu: NodeJS.CpuUsage
  /** Messages of every kind received since the start. */
  readonly received: number
  /** When this process heard each block's commit (the indexer's NOTIFY), same clock as the arrivals. */
  readonly commits: ReadonlyArray<readonly [block: number, at: number]>
  /** Arrival times (ms, monotonic clock) of trades deltas, by the block they carry. */
  readonly arrivals: ReadonlyArray<readonly [block: number, times: ReadonlyArray<number>]>
  readonly errors: number
  readonly firstError: string | undefined
}

/** The monotonic clock the server's traces use (`process.hrtime`: one clock for every process). */
const now = () => Number(process.hrtime.bigint()) / 1e6
const TRADES_DELTA = Buffer.from('{"type":"delta","topic":"trades",')
const SNAPSHOT = Buffer.from('{"type":"snapshot",')
const PING = Buffer.from('{"type":"ping"}')
const ERROR = Buffer.from('{"type":"error",')
const BLOCK = Buffer.from('"block":')
const PER_ADDRESS = 10
const HANDSHAKES = 100

const startsWith = (data: Buffer, prefix: Buffer) =>
  data.length >= prefix.length && data.compare(prefix, 0, prefix.length, 0, prefix.length) === 0

/** The number after the first `"block":` (a delta's position block comes before its changes). */
const blockOf = (data: Buffer) => {
  let i = data.indexOf(BLOCK) + BLOCK.length
  let block = 0
  for (; data[i]! >= 48 && data[i]! <= 57; i++) block = block * 10 + data[i]! - 48
  return block
}

const main = async () => {
  const url = process.argv[2]!
  const count = Number(process.argv[3])
  const markets = process.argv[4]!.split(",")
  const followers = markets.map((_, m) => Math.floor(count / markets.length) + (m < count % markets.length ? 1 : 0))
  const arrivals = new Map<number, Array<number>>()
  const commits = new Map<number, number>()
  const listener = new pg.Client({ connectionString: process.argv[5]! })
  await listener.connect()
  listener.on("notification", (n) => {
    const at = now()
    const block = JSON.parse(n.payload ?? "{}").block as number
    if (!commits.has(block)) commits.set(block, at)
  })
  await listener.query(`listen ${INDEXED_CHANNEL}`)
  let received = 0
  let ready = 0
  let opening = 0
  let errors = 0
  let firstError: string | undefined
  const failed = (what: string) => {
    errors++
    firstError ??= what
  }

  process.on("message", (message) => {
    if (message !== "stats") return
    const answer: ClientStats = {
      cpu: process.cpuUsage(),
      received,
      commits: [...commits],
      arrivals: [...arrivals],
      errors,
      firstError
    }
    process.send!(answer)
  })
  process.on("disconnect", () => process.exit(0))

  for (let i = 0; i < count; i++) {
    while (opening >= HANDSHAKES) await new Promise((r) => setTimeout(r, 1))
    const m = i % markets.length
    const k = 2 + Math.floor(i / PER_ADDRESS)
    const ws = new WebSocket(url, {
      localAddress: `127.0.${Math.floor(k / 250)}.${1 + (k % 250)}`,
      perMessageDeflate: false,
      skipUTF8Validation: true
    })
    let snapshots = 0
    let handshaking = true
    const handshakeOver = () => {
      if (handshaking) opening--
      handshaking = false
    }
    opening++
    ws.on("open", () => {
      handshakeOver()
      for (const topic of ["trades", "prices", "orderbook"]) ws.send(JSON.stringify({ type: "subscribe", topic, marketId: markets[m] }))
    })
    ws.on("message", (data: Buffer) => {
      const at = now()
      received++
      if (startsWith(data, TRADES_DELTA)) {
        const block = blockOf(data)
        let times = arrivals.get(block)
        if (times === undefined) arrivals.set(block, (times = []))
        times.push(at)
        if (times.length === followers[m]) process.send!({ done: block })
      } else if (startsWith(data, PING)) ws.send('{"type":"pong"}')
      else if (startsWith(data, SNAPSHOT)) {
        if (++snapshots === 3 && ++ready === count) process.send!({ ready: true })
      } else if (startsWith(data, ERROR)) failed(data.toString())
    })
    ws.on("error", (error) => {
      handshakeOver()
      failed(String(error))
    })
    ws.on("close", (code) => {
      handshakeOver()
      if (code !== 1000 && code !== 1001) failed(`closed ${code}`)
    })
  }
}

void main()
