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
import { answerOf, bytesOf, CLOSE_BRACE, CLOSE_BRACKET, COMMA, GIVE_UP, OPEN_BRACE, OPEN_BRACKET, Scanner } from "./answer-scanner.js"

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
    const answer = answerOf(s, (s) => {
      const logs: Array<ChainLog> = []
      s.expect(OPEN_BRACKET)
      if (!s.take(CLOSE_BRACKET)) {
        do logs.push(log(s))
        while (s.take(COMMA))
        s.expect(CLOSE_BRACKET)
      }
      return logs
    })
    s.skipSpace()
    if (s.at !== bytes.length || answer.id !== id) return undefined
    return answer.result
  } catch (error) {
    if (error === GIVE_UP) return undefined
    throw error
  }
}
