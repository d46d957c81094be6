/**
 * The committed client types (`client/<api>.d.ts`) are what `npm run client:generate` writes
 * from the API definitions today: an endpoint changed without regenerating fails here.
 */
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { API_NAMES } from "../../src/api-documents.js"
import { clientTypesPath, renderClientTypes } from "../../src/client-types.js"
import { ROOT } from "../support/process.js"

describe("the typed client", () => {
  for (const api of API_NAMES) {
    it(`client/${api}.d.ts is up to date (else: npm run client:generate)`, async () => {
      const committed = await fs.readFile(clientTypesPath(api), "utf8")
      const generated = await renderClientTypes(api)
      // Compared as text: a difference names the first line that differs, not 300 KB of it.
      const [a, b] = [committed.split("\n"), generated.split("\n")]
      const first = a.findIndex((line, i) => line !== b[i])
      expect(first === -1 && a.length === b.length ? "identical" : `line ${first + 1}: ${a[first]} | ${b[first]}`).toBe("identical")
    }, 120_000)
  }

  it("carries the documents' types: numbers and booleans in queries, decimal strings for amounts", async () => {
    const indexer = await fs.readFile(Path.join(ROOT, "client", "indexer.d.ts"), "utf8")
    const list = indexer.slice(indexer.indexOf('"markets.list": {'))
    expect(list.slice(0, list.indexOf("responses:"))).toMatch(/featured\?: boolean;[\s\S]*limit\?: number;[\s\S]*offset\?: number;/)
    const market = indexer.slice(indexer.indexOf("        Market: {"))
    expect(market.slice(0, market.indexOf("\n        };"))).toMatch(/volume: string;/)
  })
})
