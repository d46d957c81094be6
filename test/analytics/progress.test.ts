/**
 * Progress on a terminal: the tables in flight on one line rewritten in place (rows, rows/s),
 * and a line of its own for each table as it finishes; nothing at all when the stream is not a
 * terminal.
 */
import { describe, expect, it } from "vitest"
import { progressOn } from "../../src/analytics/progress.js"

const stream = (isTTY: boolean) => {
  const written: Array<string> = []
  return { written, stream: { isTTY, write: (text: string) => written.push(text) } as unknown as NodeJS.WriteStream }
}

describe("export progress", () => {
  it("shows the tables in flight and each finished table's rows and rows/s on a terminal", async () => {
    const tty = stream(true)
    const progress = progressOn(tty.stream)
    const trade = progress.table("trade", "append")
    const holders = progress.table("token_holder", "mutable")
    await new Promise((r) => setTimeout(r, 120))
    trade.rows(1_234_567)
    expect(tty.written.at(-1)).toMatch(/^\r\x1b\[2K {2}trade 1,234,567 rows [\d,]+ rows\/s {2}\| {2}token_holder 0 rows 0 rows\/s$/)
    trade.done(2_000_000)
    const finished = tty.written.slice(-2)
    expect(finished[0]).toMatch(/^\r\x1b\[2K {2}trade +2,000,000 rows +[\d,]+ rows\/s +[\d.]+ s {2}append\n$/)
    expect(finished[1]).toMatch(/^\r\x1b\[2K {2}token_holder 0 rows/)
    holders.done(5)
    expect(tty.written.at(-1)).toMatch(/token_holder +5 rows .* mutable\n$/)
  })

  it("is silent when not a terminal", () => {
    const pipe = stream(false)
    const table = progressOn(pipe.stream).table("trade", "append")
    table.rows(10)
    table.done(10)
    expect(pipe.written).toEqual([])
  })
})
