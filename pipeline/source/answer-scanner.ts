/**
 * A reader of JSON-RPC answers straight from their bytes, for the answers read on every range
 * (eth_getLogs answers, `logs-answer.ts`; header batches, `headers-answer.ts`): it makes only
 * the strings and numbers its caller keeps, where JSON.parse would make every object and string
 * of the answer for the collector.
 *
 * Invariant: a reader built on it returns exactly what the general path (JSON.parse and the
 * checks of `rpc.ts`) would make of the same bytes, or gives way (`GIVE_UP`, caught by the
 * reader, which returns undefined) on anything else: an escape in a string, a value of another
 * type than expected, a malformed hash, bytes that are not this JSON at all. The general path
 * then gives the precise typed error, or reads an unusual but valid answer.
 */
export const QUOTE = 0x22
export const COMMA = 0x2c
export const COLON = 0x3a
export const OPEN_BRACE = 0x7b
export const CLOSE_BRACE = 0x7d
export const OPEN_BRACKET = 0x5b
export const CLOSE_BRACKET = 0x5d
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
export const latin1 = (Buffer.prototype as unknown as { latin1Slice: (this: Buffer, start: number, end: number) => string }).latin1Slice

/** `0x` and lowercase hex digits: a hex string as parseLog keeps it. */
const LOWER_HEX = /^0x[0-9a-f]*$/
/** Hex in any case (lowercased before it is kept). */
const ANY_HEX = /^0[xX][0-9a-fA-F]*$/

/** How deep `skipValue` goes into nested arrays and objects before it gives way. */
const MAX_DEPTH = 32

/** Thrown inside the scan to abandon it; never escapes `readLogsAnswer`. */
export const GIVE_UP = Symbol("give up")

/** The last value read for one field: its bytes in the answer and its string. */
export interface Repeat {
  start: number
  end: number
  text: string | undefined
}

const repeat = (): Repeat => ({ start: 0, end: 0, text: undefined })

export class Scanner {
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

  /**
   * Skips any JSON value (nested at most `MAX_DEPTH` deep): what a reader does with the fields it
   * does not keep (a header's transactions, withdrawals, extraData ...). Strings with escapes and
   * anything JSON.parse would refuse give way.
   */
  skipValue(depth = 0) {
    if (depth > MAX_DEPTH) throw GIVE_UP
    this.skipSpace()
    const c = this.bytes[this.at]
    if (c === QUOTE) {
      this.stringSpan()
    } else if (c === OPEN_BRACE) {
      this.at++
      if (this.take(CLOSE_BRACE)) return
      do {
        this.stringSpan()
        this.expect(COLON)
        this.skipValue(depth + 1)
      } while (this.take(COMMA))
      this.expect(CLOSE_BRACE)
    } else if (c === OPEN_BRACKET) {
      this.at++
      if (this.take(CLOSE_BRACKET)) return
      do this.skipValue(depth + 1)
      while (this.take(COMMA))
      this.expect(CLOSE_BRACKET)
    } else if (c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39)) {
      this.number()
    } else if (!this.word("true") && !this.word("false") && !this.word("null")) throw GIVE_UP
  }

  /** A JSON number, as the grammar has it: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
  private number() {
    const b = this.bytes
    const digits = () => {
      const start = this.at
      while (b[this.at]! >= 0x30 && b[this.at]! <= 0x39) this.at++
      if (this.at === start) throw GIVE_UP
      return this.at - start
    }
    if (b[this.at] === 0x2d) this.at++
    const start = this.at
    if (digits() > 1 && b[start] === 0x30) throw GIVE_UP
    if (b[this.at] === 0x2e) {
      this.at++
      digits()
    }
    if (b[this.at] === 0x65 || b[this.at] === 0x45) {
      this.at++
      if (b[this.at] === 0x2b || b[this.at] === 0x2d) this.at++
      digits()
    }
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

export const bytesOf = (names: ReadonlyArray<string>) => names.map((n) => Buffer.from(n, "latin1"))

const [JSONRPC, ID, RESULT] = [0, 1, 2]
const ANSWER_KEYS = bytesOf(["jsonrpc", "id", "result"])

/**
 * One answer object, `{"jsonrpc":"2.0","id":N,"result":...}` in any key order (the version may
 * be left out), its result read by `result`: its id and what `result` read. An error answer, a
 * key twice or any other key gives way.
 */
export const answerOf = <A>(s: Scanner, result: (s: Scanner) => A): { readonly id: number; readonly result: A } => {
  let id: number | undefined
  let read: { readonly value: A } | undefined
  let sawVersion = false
  s.expect(OPEN_BRACE)
  do {
    const key = s.key(ANSWER_KEYS)
    if (key === JSONRPC && !sawVersion) {
      const start = s.stringSpan()
      if (latin1.call(s.bytes, start, s.at - 1) !== "2.0") throw GIVE_UP
      sawVersion = true
    } else if (key === ID && id === undefined) id = s.integer()
    else if (key === RESULT && read === undefined) read = { value: result(s) }
    else throw GIVE_UP
  } while (s.take(COMMA))
  s.expect(CLOSE_BRACE)
  if (id === undefined || read === undefined) throw GIVE_UP
  return { id, result: read.value }
}
