/**
 * Progress on a terminal: a line per table with rows and rows/s, rewritten in place and ended
 * with the final count; nothing at all when the stream is not a terminal.
 */
import { describe, expect, it } from "vitest"
import { progressOn } from "../../src/analytics/progress.js"

const stream = (isTTY: boolean) => {
  const written: Array<string> = []
  return { written, stream: { isTTY, write: (text: string) => written.push(text) } as unknown as NodeJS.WriteStream }
}

describe("export progress", () => {
  it("shows each table's rows and rows/s on a terminal", async () => {
    const tty = stream(true)
    const table = progressOn(tty.stream).table("trade", "append")
    await new Promise((r) => setTimeout(r, 120))
    table.rows(1_234_567)
    table.done(2_000_000)
    const text = tty.written.join("")
    expect(text).toMatch(/\r\x1b\[2K {2}trade +1,234,567 rows +[\d,]+ rows\/s/)
    expect(text).toMatch(/trade +2,000,000 rows +[\d,]+ rows\/s +[\d.]+ s {2}append\n$/)
  })

  it("is silent when not a terminal", () => {
    const pipe = stream(false)
    const table = progressOn(pipe.stream).table("trade", "append")
    table.rows(10)
    table.done(10)
    expect(pipe.written).toEqual([])
  })
})
