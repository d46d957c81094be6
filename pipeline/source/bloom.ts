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

/** The three bit positions an item sets, as [byte index, mask] pairs. */
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

/** A header's bloom as 256 bytes; undefined when the node sent none (or not 256 bytes). */
export const parseBloom = (value: unknown): Uint8Array | undefined =>
  typeof value === "string" && value.length === 514 && /^0x[0-9a-fA-F]{512}$/.test(value) ? hexToBytes(value as `0x${string}`) : undefined

export const mayContain = (bloom: Uint8Array, bits: BloomBits): boolean =>
  (bloom[bits[0]]! & bits[1]) !== 0 && (bloom[bits[2]]! & bits[3]) !== 0 && (bloom[bits[4]]! & bits[5]) !== 0

/** The bloom of `logs` (their addresses and topics), as 0x-hex: what a node puts in the header. */
export const bloomOf = (logs: ReadonlyArray<{ readonly address: string; readonly topics: ReadonlyArray<string> }>): string => {
  const bloom = new Uint8Array(256)
  const add = (item: string) => {
    const bits = bloomBits(item)
    for (let i = 0; i < 6; i += 2) bloom[bits[i]!]! |= bits[i + 1]!
  }
  for (const log of logs) {
    add(log.address)
    for (const topic of log.topics) add(topic)
  }
  return `0x${Buffer.from(bloom).toString("hex")}`
}

/** Bloom bits per address, computed once each (a keccak per watched address, not per block). */
export class AddressBits {
  private readonly bits = new Map<string, BloomBits>()

  of(address: string): BloomBits {
    let b = this.bits.get(address)
    if (b === undefined) this.bits.set(address, (b = bloomBits(address)))
    return b
  }

  /** The first of `addresses` the bloom may hold a log of; undefined when it holds none. */
  firstIn(bloom: Uint8Array, addresses: ReadonlyArray<string>): string | undefined {
    for (const address of addresses) if (mayContain(bloom, this.of(address))) return address
    return undefined
  }
}
