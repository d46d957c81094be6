/**
 * Values of Postgres's binary COPY format, decoded straight from the wire bytes.
 *
 * Reading the binary form skips a decimal text round trip for every number: a NUMERIC arrives as
 * base-10000 digits and becomes a bigint directly (exact, no JS number in between except for
 * partial sums below 2^53), an int8 is read as a bigint, timestamps as int64 microseconds.
 *
 * Layout (PostgreSQL docs, "COPY: Binary Format"): an 11-byte signature, int32 flags, int32
 * header-extension length and the extension; then per tuple an int16 field count (-1 ends the
 * data) and per field an int32 length (-1: NULL) followed by that many bytes.
 */

export const SIGNATURE = Buffer.from("PGCOPY\n\xff\r\n\0", "latin1")

/** A value that cannot be represented as asked; the caller names table and column. */
export class OutOfRange extends Error {
  constructor(readonly value: string, readonly why: string) {
    super(why)
  }
}

const NUMERIC_NEG = 0x4000
const NUMERIC_NAN = 0xc000
const NUMERIC_PINF = 0xd000
const NUMERIC_NINF = 0xf000

const POW10000: Array<bigint> = [1n]
const pow10000 = (n: number) => {
  while (POW10000.length <= n) POW10000.push(POW10000[POW10000.length - 1]! * 10000n)
  return POW10000[n]!
}

/** The decimal text of a binary NUMERIC (for messages; not on the hot path). */
export const numericText = (buf: Buffer, at: number): string => {
  const ndigits = buf.readInt16BE(at)
  const weight = buf.readInt16BE(at + 2)
  const sign = buf.readUInt16BE(at + 4)
  const dscale = buf.readInt16BE(at + 6)
  if (sign === NUMERIC_NAN) return "NaN"
  if (sign === NUMERIC_PINF) return "Infinity"
  if (sign === NUMERIC_NINF) return "-Infinity"
  let digits = ""
  for (let i = 0; i < ndigits; i++) digits += String(buf.readUInt16BE(at + 8 + 2 * i)).padStart(4, "0")
  // digits hold groups weight .. weight - ndigits + 1; pad to cover the units group and dscale.
  const intGroups = weight + 1
  const whole = intGroups <= 0 ? "0" : (digits + "0000".repeat(Math.max(0, intGroups - ndigits))).slice(0, intGroups * 4).replace(/^0+(?=\d)/, "")
  const frac = (intGroups < 0 ? "0000".repeat(-intGroups) + digits : digits.slice(Math.max(0, intGroups) * 4)).padEnd(dscale, "0").slice(0, dscale)
  return `${sign === NUMERIC_NEG ? "-" : ""}${whole}${dscale > 0 ? `.${frac}` : ""}`
}

const u16 = (buf: Buffer, i: number) => (buf[i]! << 8) | buf[i + 1]!
const i16 = (buf: Buffer, i: number) => (u16(buf, i) << 16) >> 16

/**
 * A binary NUMERIC as the integer value * 10^scale, failing when its magnitude reaches `limit`.
 * Fails when the value has more fraction digits than `scale` (nothing is rounded) or is
 * NaN/infinite.
 *
 * Most values are whole and below 10^12 (three base-10000 groups): those are summed as a JS
 * number, exact since every partial sum stays below 2^53, and become a bigint once.
 */
export const numericScaled = (buf: Buffer, at: number, scale: number, limit: bigint): bigint => {
  const ndigits = i16(buf, at)
  const weight = i16(buf, at + 2)
  const sign = u16(buf, at + 4)
  if (sign !== 0 && sign !== NUMERIC_NEG) throw new OutOfRange(numericText(buf, at), "not a finite number")
  if (ndigits === 0) return 0n
  // The last digit group stands for 10000^(weight - ndigits + 1).
  const exponent = weight - ndigits + 1
  if (scale === 0 && exponent >= 0 && weight < 3) {
    let small = 0
    for (let i = 0; i < ndigits; i++) small = small * 10000 + u16(buf, at + 8 + 2 * i)
    for (let i = 0; i < exponent; i++) small *= 10000
    return BigInt(sign === NUMERIC_NEG ? -small : small)
  }
  let small = 0
  let big: bigint | undefined
  for (let i = 0; i < ndigits; i++) {
    const d = u16(buf, at + 8 + 2 * i)
    if (big !== undefined) big = big * 10000n + BigInt(d)
    else if (small < 900_000_000_000) small = small * 10000 + d
    else big = BigInt(small) * 10000n + BigInt(d)
  }
  let value = big ?? BigInt(small)
  if (exponent >= 0) {
    value *= pow10000(exponent) * 10n ** BigInt(scale)
  } else {
    // Fraction groups: value / 10000^-exponent must be a whole number of 10^-scale.
    const shift = 4 * -exponent - scale
    if (shift > 0) {
      const unit = 10n ** BigInt(shift)
      if (value % unit !== 0n) throw new OutOfRange(numericText(buf, at), `more than ${scale} fraction digits`)
      value /= unit
    } else if (shift < 0) {
      value *= 10n ** BigInt(-shift)
    }
  }
  if (value >= limit) throw new OutOfRange(numericText(buf, at), `more than ${limit.toString().length - 1} digits`)
  return sign === NUMERIC_NEG ? -value : value
}

/** Microseconds between the Unix epoch and Postgres's (2000-01-01). */
export const PG_EPOCH_MICROS = 946_684_800_000_000n
