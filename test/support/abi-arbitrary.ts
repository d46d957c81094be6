/**
 * fast-check arbitraries for ABI parameter values, shared by the catalog and decoder tests.
 */
import * as fc from "fast-check"
import { getAddress } from "viem"

export interface Param {
  readonly name?: string | undefined
  readonly type: string
  readonly components?: ReadonlyArray<Param> | undefined
}

/** Arbitrary ABI values; uint8 stays within 0..2, the range every enum in the catalog accepts. */
export const arbitraryFor = (param: Param): fc.Arbitrary<unknown> => {
  const array = /^(.*)\[(\d*)\]$/.exec(param.type)
  if (array !== null) {
    const element = arbitraryFor({ type: array[1] ?? "", components: param.components })
    const length = array[2] === "" ? undefined : Number(array[2])
    return fc.array(element, { minLength: length ?? 0, maxLength: length ?? 4 })
  }
  if (param.type === "tuple") {
    return fc.record(
      Object.fromEntries((param.components ?? []).map((c) => [c.name ?? "", arbitraryFor(c)])) as Record<string, fc.Arbitrary<unknown>>
    )
  }
  const hexOf = (bytes: number) =>
    fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => `0x${Buffer.from(b).toString("hex").toUpperCase()}`)
  // viem rejects mixed case that is not the EIP-55 checksum; decoding checksums every address anyway.
  if (param.type === "address") return hexOf(20).map((h) => getAddress(h.toLowerCase()))
  if (param.type === "bool") return fc.boolean()
  if (param.type === "string") return fc.string({ unit: "grapheme", maxLength: 40 })
  if (param.type === "bytes")
    return fc
      .integer({ min: 0, max: 70 })
      .chain((n) => hexOf(n))
      .map((h) => h.replace("0X", "0x"))
  const bytesN = /^bytes(\d+)$/.exec(param.type)
  if (bytesN !== null) return hexOf(Number(bytesN[1])).map((h) => h.replace("0X", "0x"))
  const int = /^(u?)int(\d+)$/.exec(param.type)
  if (int !== null) {
    const bits = Number(int[2])
    const unsigned = int[1] === "u"
    if (bits === 8 && unsigned) return fc.integer({ min: 0, max: 2 })
    const min = unsigned ? 0n : -(2n ** BigInt(bits - 1))
    const max = unsigned ? 2n ** BigInt(bits) - 1n : 2n ** BigInt(bits - 1) - 1n
    const big = fc.bigInt({ min, max })
    return bits > 48 ? big : big.map(Number)
  }
  throw new Error(`no arbitrary for ${param.type}`)
}
