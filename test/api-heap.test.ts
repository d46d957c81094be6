import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { API_V8_FLAGS, indexerChildOptions, withoutApiV8Flags } from "../src/api-heap.js"

describe("the API process's V8 flags", () => {
  it("are on npm start's command line, before the script", () => {
    const start = (JSON.parse(fs.readFileSync("package.json", "utf8")) as { scripts: Record<string, string> }).scripts["start"]!
    const command = start.split("&&").at(-1)!.trim().split(/\s+/)
    const script = command.indexOf(".build/main.mjs")
    expect(command[0]).toBe("node")
    expect(script).toBeGreaterThan(0)
    for (const flag of API_V8_FLAGS) expect(command.slice(1, script)).toContain(flag)
  })

  it("are not passed on to the indexer child, whatever their value; other options are", () => {
    expect(withoutApiV8Flags(["--max-semi-space-size=32", "--enable-source-maps", "--max-semi-space-size=8", "--cpu-prof"])).toEqual([
      "--enable-source-maps",
      "--cpu-prof"
    ])
  })

  it("the indexer child gets its own after the options it inherits, once", () => {
    expect(indexerChildOptions(["--max-semi-space-size=32", "--enable-source-maps"])).toEqual([
      "--enable-source-maps",
      "--single-threaded-gc"
    ])
    expect(indexerChildOptions(["--single-threaded-gc", "--cpu-prof"])).toEqual(["--cpu-prof", "--single-threaded-gc"])
  })
})
