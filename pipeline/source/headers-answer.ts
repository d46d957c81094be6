/**
 * A fast reader of a batch of `eth_getBlockByNumber` answers (the headers a range's bloom check
 * and stamps need, 100 per exchange), straight from the response bytes: `[{"jsonrpc":"2.0",
 * "id":N,"result":{header}}, ...]` in any answer order, key order and whitespace.
 *
 * A header answer carries some twenty fields (the bloom alone is 514 characters, transactions a
 * list of hashes); decoding the body to a string and JSON.parse made every one of them, for the
 * five `parseHeader` keeps, and the backfill fetches a header for every block its answers hold no
 * logs of. This scans the bytes once and makes only the `BlockHeader` and its strings.
 *
 * Invariant (`answer-scanner.ts`): it returns exactly what `parseHeader` would make of JSON.parse
 * of the same bytes, one header per requested id in request order, or `undefined` when the
 * answer is anything else (an error answer, a null result, an id missing, repeated or not asked
 * for, an unexpected value): the caller then takes the general path, which gives the precise
 * typed error or reads an unusual but valid answer.
 */
import {
  answerOf,
  bytesOf,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COMMA,
  GIVE_UP,
  latin1,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  Scanner
} from "./answer-scanner.js"
import type { BlockHeader } from "./block-header.js"
import { parseBloom } from "./bloom.js"

const [NUMBER, HASH, PARENT_HASH, TIMESTAMP, LOGS_BLOOM] = [0, 1, 2, 3, 4]
const HEADER_KEYS = bytesOf(["number", "hash", "parentHash", "timestamp", "logsBloom"])

const header = (s: Scanner): BlockHeader => {
  s.expect(OPEN_BRACE)
  let number: number | undefined
  let hash: string | undefined
  let parentHash: string | undefined
  let timestamp: number | undefined
  let logsBloom: string | undefined
  let sawBloom = false
  if (!s.take(CLOSE_BRACE)) {
    do {
      switch (s.key(HEADER_KEYS)) {
        case NUMBER:
          if (number !== undefined) throw GIVE_UP
          number = s.quantity()
          break
        case HASH:
          if (hash !== undefined) throw GIVE_UP
          hash = s.hex(64)
          break
        case PARENT_HASH:
          if (parentHash !== undefined) throw GIVE_UP
          parentHash = s.hex(64)
          break
        case TIMESTAMP:
          if (timestamp !== undefined) throw GIVE_UP
          timestamp = s.quantity()
          break
        case LOGS_BLOOM: {
          if (sawBloom) throw GIVE_UP
          sawBloom = true
          s.skipSpace()
          // Not a string, or not 256 bytes' worth: no bloom (parseBloom), nothing checked against it.
          if (s.bytes[s.at] !== QUOTE) {
            s.skipValue()
            break
          }
          const start = s.stringSpan()
          logsBloom = parseBloom(latin1.call(s.bytes, start, s.at - 1))
          break
        }
        default:
          s.skipValue()
      }
    } while (s.take(COMMA))
    s.expect(CLOSE_BRACE)
  }
  if (number === undefined || hash === undefined || parentHash === undefined || timestamp === undefined) throw GIVE_UP
  return { number, hash, parentHash, timestamp, logsBloom }
}

/**
 * The headers of the batch answer `bytes` to the requests `ids`, in the order of `ids`, or
 * undefined when the answer is not the plain shape this reader knows (see the module comment).
 */
export const readHeadersAnswer = (bytes: Buffer, ids: ReadonlyArray<number>): Array<BlockHeader> | undefined => {
  const s = new Scanner(bytes)
  try {
    const byId = new Map<number, BlockHeader>()
    s.expect(OPEN_BRACKET)
    if (!s.take(CLOSE_BRACKET)) {
      do {
        const { id, result } = answerOf(s, header)
        if (byId.has(id)) throw GIVE_UP
        byId.set(id, result)
      } while (s.take(COMMA))
      s.expect(CLOSE_BRACKET)
    }
    s.skipSpace()
    if (s.at !== bytes.length || byId.size !== ids.length) return undefined
    const headers: Array<BlockHeader> = []
    for (const id of ids) {
      const h = byId.get(id)
      if (h === undefined) return undefined
      headers.push(h)
    }
    return headers
  } catch (error) {
    if (error === GIVE_UP) return undefined
    throw error
  }
}
