/**
 * Framing of a binary COPY stream: checks the header once, then hands every complete tuple to
 * `onTuple` as (buffer, fields), where fields[2i] is where field i's bytes start and
 * fields[2i+1] their length (-1: NULL); `fields` is reused for every tuple. The payloads are the CopyData messages
 * Postgres sends (one tuple each in practice, but the protocol does not promise it), so a tuple
 * split across payloads is carried over (copied: the driver may reuse a payload's memory once
 * the callback returns) and completed by the next one.
 */
import { SIGNATURE } from "./pg-binary.js"

export class CopyFormatError extends Error {}

export class CopyTuples {
  private carry: Buffer | undefined
  private headerDone = false
  private ended = false

  private readonly fields: Int32Array

  constructor(
    private readonly columns: number,
    private readonly onTuple: (buf: Buffer, fields: Int32Array) => void
  ) {
    this.fields = new Int32Array(2 * columns)
  }

  /** True once the trailer (field count -1) has been read. */
  get complete() {
    return this.ended
  }

  feed(payload: Buffer) {
    const buf = this.carry === undefined ? payload : Buffer.concat([this.carry, payload])
    this.carry = undefined
    let at = 0
    if (!this.headerDone) {
      if (buf.length < SIGNATURE.length + 8) return this.keep(buf, 0)
      if (!buf.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new CopyFormatError("not a binary COPY stream")
      const extension = buf.readInt32BE(SIGNATURE.length + 4)
      if (buf.length < SIGNATURE.length + 8 + extension) return this.keep(buf, 0)
      at = SIGNATURE.length + 8 + extension
      this.headerDone = true
    }
    while (at + 2 <= buf.length) {
      const count = ((buf[at]! << 24) >> 16) | buf[at + 1]!
      if (count === -1) {
        this.ended = true
        return
      }
      if (count !== this.columns) throw new CopyFormatError(`a tuple of ${count} fields where ${this.columns} were expected`)
      // Locate every field first: a tuple is decoded only once it is whole.
      const fields = this.fields
      let end = at + 2
      for (let i = 0; i < count && end !== -1; i++) {
        if (end + 4 > buf.length) end = -1
        else {
          const length = (buf[end]! << 24) | (buf[end + 1]! << 16) | (buf[end + 2]! << 8) | buf[end + 3]!
          fields[2 * i] = end + 4
          fields[2 * i + 1] = length
          end += 4 + (length > 0 ? length : 0)
          if (end > buf.length) end = -1
        }
      }
      if (end === -1) return this.keep(buf, at)
      this.onTuple(buf, fields)
      at = end
    }
    if (at < buf.length) this.keep(buf, at)
  }

  private keep(buf: Buffer, from: number) {
    this.carry = Buffer.from(buf.subarray(from))
  }
}
