/**
 * A block header's `logsBloom`: a 2048-bit filter of the addresses and topics of every log in
 * the block. Each item (an address's 20 bytes, a topic's 32) sets three bits, taken from the
 * first six bytes of its keccak256 as three big-endian 16-bit numbers masked to 0..2047; bit b
 * is bit (b % 8) of byte 255 - b / 8. All three bits clear means the block has no log with that
 * item; all set means it may.
 *
 * Used to catch a node whose eth_getLogs leaves out a block's logs: an empty answer for a block
 * whose bloom says "maybe" for a watched contract is asked again (see `withheld.ts`).
 */
import { hexToBytes, keccak256 } from "viem"

/** The three bits an item sets, as [byte index, mask] pairs. */
export type BloomBits = readonly [number, number, number, number, number, number]

export const bloomBits = (item: string): BloomBits => {
  const h = keccak256(hexToBytes(item as `0x${string}`), "bytes")
  const out: Array<number> = []
  for (let i = 0; i < 6; i += 2) {
    const bit = ((h[i]! << 8) | h[i + 1]!) & 2047
    out.push(255 - (bit >> 3), 1 << (bit & 7))
  }
  return out as unknown as BloomBits
}

/**
 * `bloomBits` remembering up to `limit` items (then starting over): for producers of blooms
 * (the synthetic generator, the replay node), where the same contracts, event signatures and
 * users come back in block after block.
 */
export const memoizedBloomBits = (limit = 200_000): ((item: string) => BloomBits) => {
  const known = new Map<string, BloomBits>()
  return (item) => {
    let bits = known.get(item)
    if (bits === undefined) {
      if (known.size >= limit) known.clear()
      known.set(item, (bits = bloomBits(item)))
    }
    return bits
  }
}

/** A well-formed bloom as a node sends it: 0x and 512 hex digits (2048 bits). */
export const BLOOM_HEX = /^0x[0-9a-fA-F]{512}$/

/**
 * A header's bloom, kept as the node's 0x-hex string (bytes are read from it only when checked:
 * most headers never are); undefined when the node sent none or not 256 bytes' worth.
 */
export const parseBloom = (value: unknown): string | undefined =>
  typeof value === "string" && value.length === 514 && value.startsWith("0x") ? value : undefined

/** A hex digit's value; 15 for anything else, so a malformed bloom errs on "maybe". */
const nibble = (code: number) =>
  code >= 48 && code <= 57 ? code - 48 : code >= 97 && code <= 102 ? code - 87 : code >= 65 && code <= 70 ? code - 55 : 15

const byteAt = (bloom: string, index: number) => (nibble(bloom.charCodeAt(2 + 2 * index)) << 4) | nibble(bloom.charCodeAt(3 + 2 * index))

export const mayContain = (bloom: string, bits: BloomBits): boolean =>
  (byteAt(bloom, bits[0]) & bits[1]) !== 0 && (byteAt(bloom, bits[2]) & bits[3]) !== 0 && (byteAt(bloom, bits[4]) & bits[5]) !== 0

/**
 * The bloom of `logs` (their addresses and topics), as 0x-hex: what a node puts in the header.
 * `bitsOf` may be a memo of `bloomBits` for callers that see the same items again and again.
 */
export const bloomOf = (
  logs: ReadonlyArray<{ readonly address: string; readonly topics: ReadonlyArray<string> }>,
  bitsOf: (item: string) => BloomBits = bloomBits
): string => {
  const bloom = new Uint8Array(256)
  const add = (item: string) => {
    const bits = bitsOf(item)
    for (let i = 0; i < 6; i += 2) bloom[bits[i]!]! |= bits[i + 1]!
  }
  for (const log of logs) {
    add(log.address)
    for (const topic of log.topics) add(topic)
  }
  return `0x${Buffer.from(bloom).toString("hex")}`
}

/**
 * Bloom bits of the watch list (one list that only grows at the end), computed once per address
 * and indexed by each address's first bit: a bloom is checked by walking its set bits and
 * looking only at the addresses whose first bit is among them, not at thousands of addresses.
 */
export class AddressBits {
  private readonly known: Array<string> = []
  private readonly bits: Array<number> = []
  /** Positions in `known` by first bit index (0..2047). */
  private readonly byFirstBit = new Map<number, Array<number>>()

  /**
   * The first `count` of `addresses` (a prefix of the watch list) that the bloom may hold a log
   * of, the earliest on the list; undefined when it holds none.
   */
  firstIn(bloom: string, addresses: ReadonlyArray<string>, count = addresses.length): string | undefined {
    this.cover(addresses, count)
    let found = Number.POSITIVE_INFINITY
    for (let byte = 0; byte < 256; byte++) {
      const value = byteAt(bloom, byte)
      if (value === 0) continue
      for (let k = 0; k < 8; k++) {
        if ((value & (1 << k)) === 0) continue
        const candidates = this.byFirstBit.get((255 - byte) * 8 + k)
        if (candidates === undefined) continue
        for (const i of candidates) {
          if (i >= count || i >= found) continue
          const j = i * 6
          if ((byteAt(bloom, this.bits[j + 2]!) & this.bits[j + 3]!) !== 0 && (byteAt(bloom, this.bits[j + 4]!) & this.bits[j + 5]!) !== 0)
            found = i
        }
      }
    }
    return found === Number.POSITIVE_INFINITY ? undefined : addresses[found]
  }

  /** Adds the bits of the addresses up to `count` not seen yet (the list only grows at the end). */
  private cover(addresses: ReadonlyArray<string>, count: number) {
    if (count > 0 && count <= this.known.length && this.known[count - 1] !== addresses[count - 1]) {
      throw new Error("AddressBits: the address list is not the one it indexes")
    }
    for (let i = this.known.length; i < count; i++) {
      const bits = bloomBits(addresses[i]!)
      this.known.push(addresses[i]!)
      this.bits.push(...bits)
      const first = (255 - bits[0]) * 8 + Math.log2(bits[1])
      let list = this.byFirstBit.get(first)
      if (list === undefined) this.byFirstBit.set(first, (list = []))
      list.push(i)
    }
  }
}
