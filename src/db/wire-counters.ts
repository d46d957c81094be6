/**
 * Work a process asks of Postgres, counted at the wire: every connection of a pool is opened on a
 * socket that reads the protocol messages passing through it (frontend and backend), whatever
 * library or query builder produced them. The counts depend only on the messages sent and the
 * answers' command tags, never on timing, so a test can hold them to a budget.
 *
 * What is counted (protocol 3.0, https://www.postgresql.org/docs/current/protocol-message-formats.html):
 * - `statements`: statements the client asked to run: each simple Query ('Q') and each Execute
 *   ('E') of the extended protocol (a parse/bind/execute round counts once; a COPY is one 'Q');
 * - `rowsWritten`: rows the server reports written in CommandComplete ('C') tags: `INSERT 0 n`,
 *   `UPDATE n`, `DELETE n`, `MERGE n`, and `COPY n` of a COPY FROM (one the server answered with
 *   CopyInResponse 'G'; a COPY TO reads), with the split by kind beside it;
 * - `bytesSent` / `bytesReceived`: every byte written to / read from the socket, startup and
 *   authentication included; `copyBytes`: the CopyData ('d') payloads sent, a part of `bytesSent`.
 *
 * Invariants: each socket parses its own two directions in order (a connection's messages never
 * interleave with another's); a message split across chunks is reassembled only as far as the
 * 5-byte header (and the short 'C' tag body), the rest is skipped by length, so the cost is per
 * message, not per byte. A TLS connection's bytes are encrypted: such a connection is not parsed,
 * only tallied in `unparsedConnections`, so the figures never mix in garbage.
 */
import * as net from "node:net"
import type { Duplex } from "node:stream"

/** A snapshot of the counters (plain numbers: a process's totals stay far below 2^53). */
export interface PgWork {
  readonly connections: number
  readonly unparsedConnections: number
  readonly statements: number
  readonly rowsWritten: number
  readonly rowsInserted: number
  readonly rowsUpdated: number
  readonly rowsDeleted: number
  readonly rowsCopied: number
  readonly bytesSent: number
  readonly bytesReceived: number
  readonly copyBytes: number
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

export const emptyWork = (): PgWork => ({
  connections: 0,
  unparsedConnections: 0,
  statements: 0,
  rowsWritten: 0,
  rowsInserted: 0,
  rowsUpdated: 0,
  rowsDeleted: 0,
  rowsCopied: 0,
  bytesSent: 0,
  bytesReceived: 0,
  copyBytes: 0
})

/** The counters one pool (or several) adds to; `snapshot` copies them. */
export class WireCounters {
  private readonly work: Mutable<PgWork> = emptyWork()

  snapshot(): PgWork {
    return { ...this.work }
  }

  /** A `stream` factory for pg's Client/Pool config: a socket that counts into these counters. */
  readonly stream = (config?: { readonly ssl?: unknown }): Duplex => {
    const work = this.work
    work.connections++
    if (config?.ssl !== undefined && config.ssl !== false && config.ssl !== null) {
      work.unparsedConnections++
      return new net.Socket()
    }
    return new CountingSocket(work)
  }
}

/** The startup-phase request codes that a client may send before the (untyped) StartupMessage. */
const SSL_REQUEST = 80877103
const GSSENC_REQUEST = 80877104

/**
 * Splits one direction of a connection into messages: `typed` false while the messages carry no
 * type byte (the client's startup phase). Calls `onMessage(type, length, body?)` once per
 * message, with the body only when `wantBody(type)` says so.
 */
class MessageReader {
  private header = Buffer.alloc(8)
  private headerFill = 0
  private skip = 0
  private body: Buffer | undefined = undefined
  private bodyFill = 0
  private type = 0
  private length = 0

  constructor(
    private typed: boolean,
    private readonly wantBody: (type: number) => boolean,
    private readonly onMessage: (type: number, length: number, body: Buffer | undefined) => void
  ) {}

  feed(chunk: Buffer) {
    let at = 0
    while (at < chunk.length) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - at)
        if (this.body !== undefined) {
          chunk.copy(this.body, this.bodyFill, at, at + n)
          this.bodyFill += n
        }
        this.skip -= n
        at += n
        if (this.skip === 0) this.finish()
        continue
      }
      // Untyped messages: Int32 length (itself included) + Int32 code; typed: Byte1 + Int32 length.
      const headerSize = this.typed ? 5 : 8
      const n = Math.min(headerSize - this.headerFill, chunk.length - at)
      chunk.copy(this.header, this.headerFill, at, at + n)
      this.headerFill += n
      at += n
      if (this.headerFill < headerSize) continue
      this.headerFill = 0
      if (this.typed) {
        this.type = this.header[0]!
        const length = this.header.readInt32BE(1)
        this.length = length
        this.skip = length - 4
        this.body = this.wantBody(this.type) ? Buffer.alloc(this.skip) : undefined
        this.bodyFill = 0
        if (this.skip === 0) this.finish()
      } else {
        const length = this.header.readInt32BE(0)
        const code = this.header.readInt32BE(4)
        this.type = 0
        this.body = undefined
        this.skip = length - 8
        // After the StartupMessage (or a CancelRequest, whose connection then ends) messages are typed.
        if (code !== SSL_REQUEST && code !== GSSENC_REQUEST) this.typed = true
        if (this.skip === 0) this.finish()
      }
    }
  }

  private finish() {
    const body = this.body
    this.body = undefined
    if (this.type !== 0) this.onMessage(this.type, this.length, body)
  }
}

const Q = 0x51 // 'Q' Query
const E = 0x45 // 'E' Execute (frontend)
const d = 0x64 // 'd' CopyData
const C = 0x43 // 'C' CommandComplete (backend)
const G = 0x47 // 'G' CopyInResponse
const H = 0x48 // 'H' CopyOutResponse

/** Adds one CommandComplete tag's written rows to `work`; `copyIn`: the COPY was a COPY FROM. */
const countTag = (work: Mutable<PgWork>, tag: string, copyIn: boolean) => {
  const words = tag.split(" ")
  const rows = Number(words[words.length - 1])
  if (!Number.isSafeInteger(rows)) return
  switch (words[0]) {
    case "INSERT":
      work.rowsInserted += rows
      break
    case "UPDATE":
    case "MERGE":
      work.rowsUpdated += rows
      break
    case "DELETE":
      work.rowsDeleted += rows
      break
    case "COPY":
      if (!copyIn) return
      work.rowsCopied += rows
      break
    default:
      return
  }
  work.rowsWritten += rows
}

/** A plain TCP (or Unix) socket whose writes and reads are parsed as the protocol's messages. */
class CountingSocket extends net.Socket {
  constructor(work: Mutable<PgWork>) {
    super()
    const frontend = new MessageReader(
      false,
      () => false,
      (type, length) => {
        if (type === Q || type === E) work.statements++
        else if (type === d) work.copyBytes += length - 4
      }
    )
    let copyIn = false
    const backend = new MessageReader(
      true,
      (type) => type === C,
      (type, _length, body) => {
        if (type === G) copyIn = true
        else if (type === H) copyIn = false
        else if (type === C && body !== undefined) {
          // The tag is a NUL-terminated string.
          countTag(work, body.toString("latin1", 0, Math.max(0, body.length - 1)), copyIn)
          copyIn = false
        }
      }
    )
    // pg writes Buffers only (pg-protocol's serializer); anything else is counted by its bytes too.
    // Wrapped on the instance after each connect(): Node's Socket.connect resets `write` to the
    // prototype's (it may have been set to a write-after-end guard), which would drop a wrapper set earlier.
    const counted = (write: net.Socket["write"]) =>
      ((chunk: any, encoding?: any, callback?: any) => {
        const bytes = Buffer.isBuffer(chunk)
          ? chunk
          : Buffer.from(chunk, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8")
        work.bytesSent += bytes.length
        frontend.feed(bytes)
        return write.call(this, chunk, encoding, callback)
      }) as net.Socket["write"]
    const connect = this.connect
    ;(this as { connect: unknown }).connect = (...args: Array<unknown>) => {
      const socket = (connect as (...a: Array<unknown>) => net.Socket).apply(this, args)
      this.write = counted(this.write)
      return socket
    }
    this.on("data", (chunk: Buffer) => {
      work.bytesReceived += chunk.length
      backend.feed(chunk)
    })
  }
}
