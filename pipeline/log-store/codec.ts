/**
 * The log store's binary form of one fetched range (`Batch`): its block stamps and its logs, as
 * they came from the node, in about a quarter of the bytes of a plain binary layout.
 *
 * What makes it small is the shape of event data: topics after the first and data are 32-byte
 * ABI words, mostly left-padded with zeros (an address is 20 bytes in 32, an amount 4-12, a flag
 * 1), and the same words come back again and again within a range (a trader's address, a market
 * id, a contract address as a transfer's counterparty, the event signatures). So each word is
 * written as its significant bytes, or, when a range has seen it already, as a one- to
 * three-byte reference to it. Hashes (block, transaction) are random and stay 32 raw bytes.
 *
 * Layout, version 1 (varint = unsigned LEB128, zigzag where a delta may be negative):
 *   u8 version | varint from | varint to - from
 *   varint blocks, each: varint number - previous (the first: - from) | zigzag timestamp -
 *     previous (the first: - 0) | 32B hash
 *   varint addresses, each 20B                       (the range's log addresses, a table)
 *   varint logs, each:
 *     zigzag block index - previous log's | varint logIndex
 *     u8 flags: bit 0 same transaction as the log before, bit 1 data not whole words,
 *               bits 4-7 the topic count
 *     [varint transactionIndex | 32B transactionHash]   (unless bit 0)
 *     varint address (index) | each topic a word
 *     bit 1 clear: varint words, each a word; set: varint bytes, the bytes
 *   word: u8 tag, then
 *     0..32     a literal: `tag` significant bytes (the rest of the 32 are leading zeros);
 *               with 3 or more, it joins the range's dictionary (next index)
 *     33..239   the dictionary's word `tag - 33`
 *     240..255  the dictionary's word 207 + ((tag - 240) << 16 | u16)
 *
 * Invariant: `decodeRange(encodeRange(b))` gives back `b`'s range, stamps and logs field for field
 * (hex lowercase, as the source hands them on), with each log's `blockTimestamp` set from its
 * block's stamp. Tables and dictionary are per range, so a range decodes alone.
 */
import type { Batch, BlockStamp } from "../source/backfill.js"
import type { ChainLog } from "../source/chain-log.js"

const VERSION = 1
const SAME_TX = 1
const RAW_DATA = 2

/** Literals of fewer significant bytes cost no more than a reference: not worth a dictionary slot. */
const MIN_DICTIONARY_BYTES = 3
const SHORT_REF = 33
const LONG_REF = 240
const SHORT_REFS = LONG_REF - SHORT_REF
const DICTIONARY_LIMIT = SHORT_REFS + (256 - LONG_REF) * 0x10000

/**
 * The encoder's working buffer, grown as needed and reused (one per thread); each range is
 * copied out of it at its exact size.
 */
let scratch = Buffer.allocUnsafeSlow(1 << 20)

/** A hex digit's value by its character code (either case); -1 for any other code below 128. */
const HEX_DIGIT = new Int8Array(128).fill(-1)
for (let i = 0; i < 10; i++) HEX_DIGIT[48 + i] = i
for (let i = 0; i < 6; i++) {
  HEX_DIGIT[97 + i] = 10 + i
  HEX_DIGIT[65 + i] = 10 + i
}

class Writer {
  at = 0
  private buf = scratch

  room(n: number) {
    if (this.at + n <= this.buf.length) return
    let size = this.buf.length * 2
    while (size < this.at + n) size *= 2
    const grown = Buffer.allocUnsafeSlow(size)
    this.buf.copy(grown, 0, 0, this.at)
    this.buf = scratch = grown
  }

  u8(n: number) {
    this.room(1)
    this.buf[this.at++] = n
  }

  varint(n: number) {
    if (!Number.isSafeInteger(n) || n < 0) throw new Error(`cannot store ${n} as an unsigned integer`)
    this.room(8)
    while (n >= 0x80) {
      this.buf[this.at++] = (n % 0x80) | 0x80
      n = Math.floor(n / 0x80)
    }
    this.buf[this.at++] = n
  }

  zigzag(n: number) {
    this.varint(n >= 0 ? n * 2 : -n * 2 - 1)
  }

  /**
   * `length` bytes of hex from `hex[start]` (no prefix there, either case); fails on anything but
   * hex digits. Read digit by digit here rather than `Buffer.write(slice, "hex")`: most runs are
   * 1-20 bytes, where the slice and the native call cost more than the loop.
   */
  hex(hex: string, start: number, length: number) {
    this.room(length)
    const buf = this.buf
    const at = this.at
    for (let i = 0; i < length; i++) {
      const high = hex.charCodeAt(start + 2 * i)
      const low = hex.charCodeAt(start + 2 * i + 1)
      const h = high < 128 ? HEX_DIGIT[high]! : -1
      const l = low < 128 ? HEX_DIGIT[low]! : -1
      if (h < 0 || l < 0) throw new Error(`not ${length} bytes of hex: ${hex.slice(start, start + length * 2)}`)
      buf[at + i] = (h << 4) | l
    }
    this.at = at + length
  }

  /** A `0x`-prefixed hash of exactly 32 bytes. */
  hash(hex: string) {
    if (hex.length !== 66) throw new Error(`not a 32-byte hash: ${hex}`)
    this.hex(hex, 2, 32)
  }

  result() {
    const out = Buffer.allocUnsafeSlow(this.at)
    this.buf.copy(out, 0, 0, this.at)
    return out
  }
}

/** The range's words seen so far (64 hex digits each) and their dictionary indexes. */
class WordEncoder {
  private readonly seen = new Map<string, number>()

  constructor(private readonly w: Writer) {}

  /** The 64 hex digits at `hex[start]`. */
  word(hex: string, start: number) {
    let zeros = 0
    while (zeros < 64 && hex.charCodeAt(start + zeros) === 48) zeros++
    const bytes = 32 - (zeros >>> 1)
    if (bytes >= MIN_DICTIONARY_BYTES) {
      // The significant digits name the word as well as all 64 (the rest are zeros), in a shorter key.
      const key = hex.slice(start + 64 - bytes * 2, start + 64)
      const index = this.seen.get(key)
      if (index !== undefined) {
        if (index < SHORT_REFS) this.w.u8(SHORT_REF + index)
        else {
          const rest = index - SHORT_REFS
          this.w.u8(LONG_REF + Math.floor(rest / 0x10000))
          this.w.u8((rest >>> 8) & 0xff)
          this.w.u8(rest & 0xff)
        }
        return
      }
      if (this.seen.size < DICTIONARY_LIMIT) this.seen.set(key, this.seen.size)
    }
    this.w.u8(bytes)
    this.w.hex(hex, start + 64 - bytes * 2, bytes)
  }

  /** A `0x`-prefixed 32-byte topic. */
  topic(topic: string) {
    if (topic.length !== 66) throw new Error(`not a 32-byte topic: ${topic}`)
    this.word(topic, 2)
  }
}

export const encodeRange = (batch: Batch): Uint8Array => {
  const blocks = [...batch.blocks.values()].sort((a, b) => a.number - b.number)
  const blockIndex = new Map<number, number>()
  blocks.forEach((b, i) => blockIndex.set(b.number, i))
  const w = new Writer()
  w.u8(VERSION)
  w.varint(batch.from)
  w.varint(batch.to - batch.from)
  w.varint(blocks.length)
  let number = batch.from
  let timestamp = 0
  for (const b of blocks) {
    w.varint(b.number - number)
    w.zigzag(b.timestamp - timestamp)
    w.hash(b.hash)
    number = b.number
    timestamp = b.timestamp
  }
  const addresses = new Map<string, number>()
  for (const log of batch.logs) if (!addresses.has(log.address)) addresses.set(log.address, addresses.size)
  w.varint(addresses.size)
  for (const a of addresses.keys()) {
    if (a.length !== 42) throw new Error(`not a 20-byte address: ${a}`)
    w.hex(a, 2, 20)
  }
  const words = new WordEncoder(w)
  w.varint(batch.logs.length)
  let previousBlock = 0
  let previousTx: ChainLog | undefined
  for (const log of batch.logs) {
    const block = blockIndex.get(log.blockNumber)
    if (block === undefined) throw new Error(`log of block ${log.blockNumber} without the block's stamp`)
    w.zigzag(block - previousBlock)
    previousBlock = block
    w.varint(log.logIndex)
    const same =
      previousTx !== undefined && previousTx.transactionHash === log.transactionHash && previousTx.transactionIndex === log.transactionIndex
    if (!log.data.startsWith("0x") || log.data.length % 2 !== 0) throw new Error(`log data not 0x-prefixed whole bytes: ${log.data}`)
    const raw = (log.data.length - 2) % 64 !== 0
    if (log.topics.length > 15) throw new Error(`a log of ${log.topics.length} topics`)
    w.u8((same ? SAME_TX : 0) | (raw ? RAW_DATA : 0) | (log.topics.length << 4))
    if (!same) {
      w.varint(log.transactionIndex)
      w.hash(log.transactionHash)
    }
    previousTx = log
    w.varint(addresses.get(log.address)!)
    for (const topic of log.topics) words.topic(topic)
    const dataBytes = (log.data.length - 2) >>> 1
    if (raw) {
      w.varint(dataBytes)
      w.hex(log.data, 2, dataBytes)
    } else {
      w.varint(dataBytes >>> 5)
      for (let at = 2; at < log.data.length; at += 64) words.word(log.data, at)
    }
  }
  return w.result()
}

/** `ZEROS[n]`: n zero bytes in hex. */
const ZEROS = Array.from({ length: 33 }, (_, n) => "00".repeat(n))

class Reader {
  at = 0
  constructor(readonly b: Buffer) {}

  u8() {
    if (this.at >= this.b.length) throw new Error("stored range ends early")
    return this.b[this.at++]!
  }

  varint() {
    let n = 0
    let scale = 1
    for (;;) {
      const byte = this.u8()
      n += (byte & 0x7f) * scale
      if (byte < 0x80) return n
      scale *= 0x80
    }
  }

  zigzag() {
    const n = this.varint()
    return n % 2 === 0 ? n / 2 : -(n + 1) / 2
  }

  /** `n` bytes as hex, no prefix. */
  hex(n: number) {
    if (this.at + n > this.b.length) throw new Error("stored range ends early")
    const s = this.b.toString("hex", this.at, this.at + n)
    this.at += n
    return s
  }
}

class WordDecoder {
  private readonly dictionary: Array<string> = []

  constructor(private readonly r: Reader) {}

  /** One word: 64 hex digits, no prefix. */
  word() {
    const tag = this.r.u8()
    if (tag <= 32) {
      const word = ZEROS[32 - tag]! + this.r.hex(tag)
      if (tag >= MIN_DICTIONARY_BYTES && this.dictionary.length < DICTIONARY_LIMIT) this.dictionary.push(word)
      return word
    }
    const index = tag < LONG_REF ? tag - SHORT_REF : SHORT_REFS + (tag - LONG_REF) * 0x10000 + this.r.u8() * 0x100 + this.r.u8()
    const word = this.dictionary[index]
    if (word === undefined) throw new Error(`stored range refers to word ${index} of ${this.dictionary.length}`)
    return word
  }
}

export const decodeRange = (bytes: Uint8Array): Batch => {
  const r = new Reader(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
  const version = r.u8()
  if (version !== VERSION) throw new Error(`stored range of format ${version}, this version reads ${VERSION}`)
  const from = r.varint()
  const to = from + r.varint()
  const stamps: Array<BlockStamp> = []
  let number = from
  let timestamp = 0
  for (let i = r.varint(); i > 0; i--) {
    number += r.varint()
    timestamp += r.zigzag()
    stamps.push({ number, timestamp, hash: `0x${r.hex(32)}` })
  }
  const addresses: Array<string> = []
  for (let i = r.varint(); i > 0; i--) addresses.push(`0x${r.hex(20)}`)
  const words = new WordDecoder(r)
  const logs: Array<ChainLog> = []
  let blockAt = 0
  let transactionHash = ""
  let transactionIndex = 0
  for (let i = r.varint(); i > 0; i--) {
    blockAt += r.zigzag()
    const block = stamps[blockAt]
    if (block === undefined) throw new Error(`stored log of block ${blockAt} of ${stamps.length}`)
    const logIndex = r.varint()
    const flags = r.u8()
    if ((flags & SAME_TX) === 0) {
      transactionIndex = r.varint()
      transactionHash = `0x${r.hex(32)}`
    }
    const address = addresses[r.varint()]
    if (address === undefined) throw new Error("stored log of an address outside the range's table")
    const topics: Array<string> = []
    for (let t = flags >>> 4; t > 0; t--) topics.push(`0x${words.word()}`)
    let data = "0x"
    if ((flags & RAW_DATA) !== 0) data += r.hex(r.varint())
    else for (let n = r.varint(); n > 0; n--) data += words.word()
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
  if (r.at !== r.b.length) throw new Error(`stored range has ${r.b.length - r.at} bytes past its logs`)
  return { from, to, logs, blocks: new Map(stamps.map((s) => [s.number, s])) }
}
