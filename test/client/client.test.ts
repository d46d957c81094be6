/**
 * The typed client (`client/index.ts`) against the real indexer API over loopback: the document
 * the server publishes is the one the types were generated from, typed query parameters (numbers,
 * booleans) go out as the text the server reads, and error answers arrive as the typed error body
 * with the same status and name as before the parameters were typed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createIndexerClient, type IndexerClient } from "../../client/index.js"
import { apiDocument } from "../../src/api-documents.js"
import { startHarness, type Harness } from "../http/indexer/support/harness.js"

let api: Harness
let indexer: IndexerClient
beforeAll(async () => {
  api = await startHarness()
  indexer = createIndexerClient(api.url)
}, 120_000)
afterAll(async () => {
  await api?.close()
})

describe("the typed indexer client", () => {
  it("is generated from the document the server serves", () => {
    expect(api.document).toEqual(apiDocument("indexer"))
  })

  it("sends typed numbers and booleans as the server's query text", async () => {
    const { data, response } = await indexer.GET("/api/markets", {
      params: { query: { sort: "volume", limit: 2, offset: 1, featured: false } }
    })
    expect(new URL(response.url).search).toBe("?sort=volume&limit=2&offset=1&featured=false")
    expect(response.status).toBe(200)
    expect(data!.meta).toMatchObject({ limit: 2, offset: 1 })
    expect(data!.data.length).toBeLessThanOrEqual(2)
    const { data: market } = await indexer.GET("/api/markets/{id}", { params: { path: { id: "15" } } })
    expect(market!.data.id).toBe("15")
  })

  it("gets the typed error body, unchanged, for a number out of the documented bounds and for a missing market", async () => {
    const outOfRange = await indexer.GET("/api/markets", { params: { query: { limit: 0 } } })
    expect(outOfRange.response.status).toBe(400)
    expect(outOfRange.error).toMatchObject({ error: "InvalidParameter" })
    expect(outOfRange.error!.message).toMatch(/limit/)
    const missing = await indexer.GET("/api/markets/{id}", { params: { path: { id: "999999" } } })
    expect(missing.response.status).toBe(404)
    expect(missing.error).toMatchObject({ error: "MarketNotFound" })
  })
})
