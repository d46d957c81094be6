/**
 * The log store's binary form of one fetched range (`Batch`): its block stamps and its logs, as
 * they came from the node, in a few hundred bytes less per log than the JSON they were read from.
 *
 * Layout (big-endian), version 1:
 *   u8 version | u48 from | u48 to
 *   u32 blocks, each: u48 number | u48 timestamp | 32B hash
 *   u16 addresses, each 20B                    (the range's log addresses, a dictionary)
 *   u16 topic0s, each 32B                      (the range's event signatures, a dictionary)
 *   u32 logs, each:
 *     u32 block (index into blocks) | u32 logIndex | u8 flags (bit 0: same transaction as the log before)
 *     [u32 transactionIndex | 32B transactionHash]   (unless bit 0)
 *     u16 address (index) | u8 topics | [u16 topic0 (index)] | 32B each further topic
 *     u32 data length | data
 *
 * Invariant: `decodeRange(encodeRange(b))` gives back `b`'s range, stamps and logs field for field
 * (hex lowercase, as the source hands them on), with each log's `blockTimestamp` set from its
 * block's stamp. Dictionaries are per range, so a range decodes alone.
 */
import type { Batch, BlockStamp } from "../source/backfill.js"
import type { ChainLog } from "../source/chain-log.js"

const VERSION = 1
const SAME_TX = 1

/** Bytes of a `0x`-prefixed hex string. */
const hexBytes = (hex: string) => (hex.length - 2) >>> 1

export const encodeRange = (batch: Batch): Uint8Array => {
  const blocks = [...batch.blocks.values()].sort((a, b) => a.number - b.number)
  const blockIndex = new Map<number, number>()
  blocks.forEach((b, i) => blockIndex.set(b.number, i))
  const addresses = new Map<string, number>()
  const topic0s = new Map<string, number>()
  let size = 1 + 6 + 6 + 4 + blocks.length * 44 + 2 + 2 + 4
  let previousTx: string | undefined
  for (const log of batch.logs) {
    if (!addresses.has(log.address)) addresses.set(log.address, addresses.size)
    const topic0 = log.topics[0]
    if (topic0 !== undefined && !topic0s.has(topic0)) topic0s.set(topic0, topic0s.size)
    size += 9 + (log.transactionHash === previousTx ? 0 : 36) + 3 + (log.topics.length > 0 ? 2 + 32 * (log.topics.length - 1) : 0)
    size += 4 + hexBytes(log.data)
    previousTx = log.transactionHash
  }
  size += addresses.size * 20 + topic0s.size * 32
  if (addresses.size > 0xffff || topic0s.size > 0xffff) throw new Error("a stored range holds more than 65,535 addresses or signatures")
  // Not from the shared pool: the worker posts it, and a view is cloned with its whole ArrayBuffer.
  const out = Buffer.allocUnsafeSlow(size)
  let at = 0
  const hex = (s: string) => {
    at += out.write(s.slice(2), at, "hex")
  }
  out.writeUInt8(VERSION, at++)
  out.writeUIntBE(batch.from, at, 6)
  out.writeUIntBE(batch.to, at + 6, 6)
  out.writeUInt32BE(blocks.length, at + 12)
  at += 16
  for (const b of blocks) {
    out.writeUIntBE(b.number, at, 6)
    out.writeUIntBE(b.timestamp, at + 6, 6)
    at += 12
    hex(b.hash)
  }
  out.writeUInt16BE(addresses.size, at)
  at += 2
  for (const a of addresses.keys()) hex(a)
  out.writeUInt16BE(topic0s.size, at)
  at += 2
  for (const t of topic0s.keys()) hex(t)
  out.writeUInt32BE(batch.logs.length, at)
  at += 4
  previousTx = undefined
  for (const log of batch.logs) {
    out.writeUInt32BE(blockIndex.get(log.blockNumber)!, at)
    out.writeUInt32BE(log.logIndex, at + 4)
    const same = log.transactionHash === previousTx
    out.writeUInt8(same ? SAME_TX : 0, at + 8)
    at += 9
    if (!same) {
      out.writeUInt32BE(log.transactionIndex, at)
      at += 4
      hex(log.transactionHash)
    }
    previousTx = log.transactionHash
    out.writeUInt16BE(addresses.get(log.address)!, at)
    out.writeUInt8(log.topics.length, at + 2)
    at += 3
    if (log.topics.length > 0) {
      out.writeUInt16BE(topic0s.get(log.topics[0]!)!, at)
      at += 2
      for (let i = 1; i < log.topics.length; i++) hex(log.topics[i]!)
    }
    out.writeUInt32BE(hexBytes(log.data), at)
    at += 4
    hex(log.data)
  }
  if (at !== size) throw new Error(`stored range encoded to ${at} bytes, ${size} planned`)
  return out
}

export const decodeRange = (bytes: Uint8Array): Batch => {
  const b = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let at = 0
  const hex = (n: number) => {
    const s = `0x${b.toString("hex", at, at + n)}`
    at += n
    return s
  }
  const version = b.readUInt8(at++)
  if (version !== VERSION) throw new Error(`stored range of format ${version}, this version reads ${VERSION}`)
  const from = b.readUIntBE(at, 6)
  const to = b.readUIntBE(at + 6, 6)
  const blockCount = b.readUInt32BE(at + 12)
  at += 16
  const stamps: Array<BlockStamp> = []
  for (let i = 0; i < blockCount; i++) {
    const number = b.readUIntBE(at, 6)
    const timestamp = b.readUIntBE(at + 6, 6)
    at += 12
    stamps.push({ number, timestamp, hash: hex(32) })
  }
  const addresses: Array<string> = []
  for (let i = b.readUInt16BE((at += 2) - 2); i > 0; i--) addresses.push(hex(20))
  const topic0s: Array<string> = []
  for (let i = b.readUInt16BE((at += 2) - 2); i > 0; i--) topic0s.push(hex(32))
  const logCount = b.readUInt32BE(at)
  at += 4
  const logs: Array<ChainLog> = []
  let transactionHash = ""
  let transactionIndex = 0
  for (let i = 0; i < logCount; i++) {
    const block = stamps[b.readUInt32BE(at)]!
    const logIndex = b.readUInt32BE(at + 4)
    const flags = b.readUInt8(at + 8)
    at += 9
    if ((flags & SAME_TX) === 0) {
      transactionIndex = b.readUInt32BE(at)
      at += 4
      transactionHash = hex(32)
    }
    const address = addresses[b.readUInt16BE(at)]!
    const topicCount = b.readUInt8(at + 2)
    at += 3
    const topics: Array<string> = []
    if (topicCount > 0) {
      topics.push(topic0s[b.readUInt16BE(at)]!)
      at += 2
      for (let t = 1; t < topicCount; t++) topics.push(hex(32))
    }
    const dataLength = b.readUInt32BE(at)
    at += 4
    const data = hex(dataLength)
    logs.push({
      address,
      topics,
      data,
      blockNumber: block.number,
      blockHash: block.hash,
      logIndex,
      transactionHash,
      transactionIndex,
      blockTimestamp: block.timestamp
    })
  }
  return { from, to, logs, blocks: new Map(stamps.map((s) => [s.number, s])) }
}
