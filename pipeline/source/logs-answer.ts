/**
 * A fast reader of the common `eth_getLogs` answer, straight from the response bytes:
 * `{"jsonrpc":"2.0","id":N,"result":[{log}, ...]}` in any key order and with any whitespace.
 *
 * Decoding the body to a string, JSON.parse and then checking each log object (`parseLog`) cost
 * about 7 µs per log, most of the fetch's share of the indexing thread, and left two objects
 * and a dozen strings per log for the collector. This scans the bytes once and makes only the
 * `ChainLog` and its strings.
 *
 * Invariant: it returns exactly what `parseLog` would make of JSON.parse of the same bytes, or
 * `undefined` when the answer is anything else: an error answer, a batch, another id, a value
 * this reader does not expect (an escape in a string, a number where a hex string belongs, a
 * malformed hash), or bytes that are not this JSON at all. The caller then takes the general
 * path, which gives the precise typed error (or reads an unusual but valid answer). So speed
 * never changes what is accepted.
 */
import type { ChainLog } from "./chain-log.js"

const QUOTE = 0x22
const COMMA = 0x2c
const COLON = 0x3a
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const BACKSLASH = 0x5c

/** Value of a hex digit byte, or -1 (upper case counts: parseLog lowercases). */
const HEX_VALUE = new Int8Array(256).fill(-1)
for (let i = 0; i < 10; i++) HEX_VALUE[0x30 + i] = i
for (let i = 0; i < 6; i++) {
  HEX_VALUE[0x61 + i] = 10 + i
  HEX_VALUE[0x41 + i] = 10 + i
}

/**
 * `buffer.latin1Slice(start, end)`: Node's own binding behind `toString("latin1", start, end)`,
 * without its encoding and range handling. Every string kept from it was checked to be hex
 * digits (ASCII, so latin1 and UTF-8 read it alike); the one other use only compares with "2.0".
 */
const latin1 = (Buffer.prototype as unknown as { latin1Slice: (this: Buffer, start: number, end: number) => string }).latin1Slice

/** `0x` and lowercase hex digits: a hex string as parseLog keeps it. */
const LOWER_HEX = /^0x[0-9a-f]*$/
/** Hex in any case (lowercased before it is kept). */
const ANY_HEX = /^0[xX][0-9a-fA-F]*$/

/** Thrown inside the scan to abandon it; never escapes `readLogsAnswer`. */
const GIVE_UP = Symbol("give up")

/** The last value read for one field: its bytes in the answer and its string. */
interface Repeat {
  start: number
  end: number
  text: string | undefined
}

const repeat = (): Repeat => ({ start: 0, end: 0, text: undefined })

class Scanner {
  at = 0
  /** Fields whose value often repeats from one log to the next. */
  readonly lastAddress = repeat()
  readonly lastTopic0 = repeat()
  readonly lastBlockHash = repeat()
  readonly lastTransactionHash = repeat()
  constructor(readonly bytes: Buffer) {}

  skipSpace() {
    const b = this.bytes
    let at = this.at
    for (;;) {
      const c = b[at]
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) at++
      else break
    }
    this.at = at
  }

  /** Consumes `byte` (after whitespace) or gives up. */
  expect(byte: number) {
    this.skipSpace()
    if (this.bytes[this.at] !== byte) throw GIVE_UP
    this.at++
  }

  /** Consumes `byte` if it comes next (after whitespace). */
  take(byte: number) {
    this.skipSpace()
    if (this.bytes[this.at] !== byte) return false
    this.at++
    return true
  }

  /** A string without escapes: returns [start, end) of its content, at the closing quote + 1. */
  stringSpan(): number {
    this.expect(QUOTE)
    const b = this.bytes
    const start = this.at
    let at = start
    for (;;) {
      const c = b[at]
      if (c === QUOTE) break
      // An escape, a control character or the end of the bytes: the general path decides.
      if (c === BACKSLASH || c === undefined || c < 0x20) throw GIVE_UP
      at++
    }
    this.at = at + 1
    return start
  }

  /** A key: the index of its name in `names`, or -1 for any other key. */
  key(names: ReadonlyArray<Uint8Array>): number {
    const start = this.stringSpan()
    const length = this.at - 1 - start
    const b = this.bytes
    let found = -1
    for (let k = 0; k < names.length && found < 0; k++) {
      const name = names[k]!
      if (name.length !== length) continue
      let i = 0
      while (i < length && b[start + i] === name[i]) i++
      if (i === length) found = k
    }
    this.expect(COLON)
    return found
  }

  /**
   * A `0x`-prefixed hex string of `digits` digits (any when undefined), lowercased. With a
   * `last` slot, a value whose bytes equal the slot's last one (the block hash of a block's
   * next log, the transaction hash of a transaction's next log, a contract's address) is that
   * same string again: one memcmp instead of a check and a new string.
   */
  hex(digits: number | undefined, last?: Repeat): string {
    this.expect(QUOTE)
    const b = this.bytes
    const start = this.at
    if (last !== undefined && last.text !== undefined) {
      const end = start + last.end - last.start
      if (b[end] === QUOTE) {
        // A plain loop: Buffer.compare's argument checks cost more than the 40-66 bytes.
        let i = 0
        const from = last.start
        const length = end - start
        while (i < length && b[start + i] === b[from + i]) i++
        if (i === length) {
          this.at = end + 1
          return last.text
        }
      }
    }
    // The closing quote found natively, then the whole span checked by one compiled regex: an
    // escape, a control character or any other non-hex byte before that quote fails it.
    const end = b.indexOf(QUOTE, start)
    if (end < 0 || (digits !== undefined && end - start - 2 !== digits)) throw GIVE_UP
    this.at = end + 1
    let value = latin1.call(b, start, end)
    if (!LOWER_HEX.test(value)) {
      if (!ANY_HEX.test(value)) throw GIVE_UP
      value = value.toLowerCase()
    }
    if (last !== undefined) {
      last.start = start
      last.end = end
      last.text = value
    }
    return value
  }

  /** A hex quantity (`0x` and at least one digit) as a number, as `Number.parseInt(text, 16)`. */
  quantity(): number {
    const start = this.stringSpan()
    const end = this.at - 1
    const b = this.bytes
    if (end - start < 3 || b[start] !== 0x30 || (b[start + 1] !== 0x78 && b[start + 1] !== 0x58)) throw GIVE_UP
    // Beyond 13 digits a number could lose precision the way parseInt does; leave those to it.
    if (end - start - 2 > 13) throw GIVE_UP
    let value = 0
    for (let i = start + 2; i < end; i++) {
      const d = HEX_VALUE[b[i]!]!
      if (d < 0) throw GIVE_UP
      value = value * 16 + d
    }
    return value
  }

  /** Skips a value this reader does not use: a string, true, false or null. */
  skipSimpleValue() {
    this.skipSpace()
    const c = this.bytes[this.at]
    if (c === QUOTE) {
      this.stringSpan()
      return
    }
    if (!this.word("true") && !this.word("false") && !this.word("null")) throw GIVE_UP
  }

  /** Consumes `word` if the bytes continue with it. */
  word(word: string) {
    for (let i = 0; i < word.length; i++) if (this.bytes[this.at + i] !== word.charCodeAt(i)) return false
    this.at += word.length
    return true
  }

  /** `true` or `false`. */
  boolean(): boolean {
    this.skipSpace()
    if (this.word("true")) return true
    if (this.word("false")) return false
    throw GIVE_UP
  }

  /** A non-negative integer of at most 15 digits (a request id). */
  integer(): number {
    this.skipSpace()
    const b = this.bytes
    const start = this.at
    let value = 0
    while (b[this.at]! >= 0x30 && b[this.at]! <= 0x39) value = value * 10 + (b[this.at++]! - 0x30)
    const digits = this.at - start
    if (digits === 0 || digits > 15 || (digits > 1 && b[start] === 0x30)) throw GIVE_UP
    return value
  }
}

const bytesOf = (names: ReadonlyArray<string>) => names.map((n) => Buffer.from(n, "latin1"))

/** The log fields read, by their index in LOG_KEYS. */
const [ADDRESS, TOPICS, DATA, BLOCK_NUMBER, BLOCK_HASH, LOG_INDEX, TRANSACTION_HASH, TRANSACTION_INDEX, BLOCK_TIMESTAMP, REMOVED] = [
  0, 1, 2, 3, 4, 5, 6, 7, 8, 9
]
const LOG_KEYS = bytesOf([
  "address",
  "topics",
  "data",
  "blockNumber",
  "blockHash",
  "logIndex",
  "transactionHash",
  "transactionIndex",
  "blockTimestamp",
  "removed"
])

const [JSONRPC, ID, RESULT] = [0, 1, 2]
const ANSWER_KEYS = bytesOf(["jsonrpc", "id", "result"])

const log = (s: Scanner): ChainLog => {
  s.expect(OPEN_BRACE)
  let address: string | undefined
  let topics: Array<string> | undefined
  let data: string | undefined
  let blockNumber: number | undefined
  let blockHash: string | undefined
  let logIndex: number | undefined
  let transactionHash: string | undefined
  let transactionIndex: number | undefined
  let blockTimestamp: number | undefined
  if (!s.take(CLOSE_BRACE)) {
    do {
      switch (s.key(LOG_KEYS)) {
        case ADDRESS:
          // parseLog lowercases any string here; a malformed address is the decoder's business,
          // but only hex is read on this path (anything else goes the general way).
          if (address !== undefined) throw GIVE_UP
          address = s.hex(40, s.lastAddress)
          break
        case TOPICS:
          if (topics !== undefined) throw GIVE_UP
          topics = []
          s.expect(OPEN_BRACKET)
          if (!s.take(CLOSE_BRACKET)) {
            topics.push(s.hex(64, s.lastTopic0))
            while (s.take(COMMA)) topics.push(s.hex(64))
            s.expect(CLOSE_BRACKET)
          }
          break
        case DATA:
          if (data !== undefined) throw GIVE_UP
          data = s.hex(undefined)
          break
        case BLOCK_NUMBER:
          if (blockNumber !== undefined) throw GIVE_UP
          blockNumber = s.quantity()
          break
        case BLOCK_HASH:
          if (blockHash !== undefined) throw GIVE_UP
          blockHash = s.hex(64, s.lastBlockHash)
          break
        case LOG_INDEX:
          if (logIndex !== undefined) throw GIVE_UP
          logIndex = s.quantity()
          break
        case TRANSACTION_HASH:
          if (transactionHash !== undefined) throw GIVE_UP
          transactionHash = s.hex(64, s.lastTransactionHash)
          break
        case TRANSACTION_INDEX:
          if (transactionIndex !== undefined) throw GIVE_UP
          transactionIndex = s.quantity()
          break
        case BLOCK_TIMESTAMP:
          if (blockTimestamp !== undefined) throw GIVE_UP
          blockTimestamp = s.quantity()
          break
        case REMOVED:
          // parseLog refuses a removed log; let it say so.
          if (s.boolean()) throw GIVE_UP
          break
        default:
          // Fields providers add (logType, transactionLogIndex, ...): unused.
          s.skipSimpleValue()
      }
    } while (s.take(COMMA))
    s.expect(CLOSE_BRACE)
  }
  if (
    address === undefined ||
    topics === undefined ||
    data === undefined ||
    blockNumber === undefined ||
    blockHash === undefined ||
    logIndex === undefined ||
    transactionHash === undefined ||
    transactionIndex === undefined
  ) {
    throw GIVE_UP
  }
  return { address, topics, data, blockNumber, blockHash, logIndex, transactionHash, transactionIndex, blockTimestamp }
}

/**
 * The logs of the answer `bytes` to the single request `id`, or undefined when the answer is not
 * the plain shape this reader knows (see the module comment).
 */
export const readLogsAnswer = (bytes: Buffer, id: number): Array<ChainLog> | undefined => {
  const s = new Scanner(bytes)
  try {
    let logs: Array<ChainLog> | undefined
    let sawId = false
    let sawVersion = false
    s.expect(OPEN_BRACE)
    do {
      const key = s.key(ANSWER_KEYS)
      if (key === JSONRPC && !sawVersion) {
        const start = s.stringSpan()
        if (latin1.call(bytes, start, s.at - 1) !== "2.0") throw GIVE_UP
        sawVersion = true
      } else if (key === ID && !sawId) {
        if (s.integer() !== id) throw GIVE_UP
        sawId = true
      } else if (key === RESULT && logs === undefined) {
        logs = []
        s.expect(OPEN_BRACKET)
        if (!s.take(CLOSE_BRACKET)) {
          do logs.push(log(s))
          while (s.take(COMMA))
          s.expect(CLOSE_BRACKET)
        }
      } else throw GIVE_UP
    } while (s.take(COMMA))
    s.expect(CLOSE_BRACE)
    s.skipSpace()
    if (s.at !== bytes.length || !sawId || logs === undefined) return undefined
    return logs
  } catch (error) {
    if (error === GIVE_UP) return undefined
    throw error
  }
}
