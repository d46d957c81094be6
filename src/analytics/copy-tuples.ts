/**
 * Framing of a binary COPY stream: checks the header once, then hands every complete tuple to
 * `onTuple` as (buffer, offset of its field count). The payloads are the CopyData messages
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

  constructor(
    private readonly columns: number,
    private readonly onTuple: (buf: Buffer, at: number) => void
  ) {}

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
      const fields = buf.readInt16BE(at)
      if (fields === -1) {
        this.ended = true
        return
      }
      if (fields !== this.columns) throw new CopyFormatError(`a tuple of ${fields} fields where ${this.columns} were expected`)
      // Walk the field lengths first: a tuple is decoded only once it is whole.
      let end = at + 2
      for (let i = 0; i < fields && end !== -1; i++) {
        if (end + 4 > buf.length) end = -1
        else {
          const length = buf.readInt32BE(end)
          end += 4 + (length > 0 ? length : 0)
          if (end > buf.length) end = -1
        }
      }
      if (end === -1) return this.keep(buf, at)
      this.onTuple(buf, at)
      at = end
    }
    if (at < buf.length) this.keep(buf, at)
  }

  private keep(buf: Buffer, from: number) {
    this.carry = Buffer.from(buf.subarray(from))
  }
}
