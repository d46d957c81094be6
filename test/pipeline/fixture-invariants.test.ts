/**
 * After indexing the committed devnet fixture (reorgs included), the database holds the
 * protocol's invariants (protocol-facts section 9) for every market, token, trade and event.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { pgClientLayer } from "../../src/db/database.js"
import { databaseInvariants } from "../support/db-invariants.js"
import { fixtureDatabaseUrl } from "../support/fixture-db.js"

describe("the indexed fixture", () => {
  it.live(
    "holds the protocol invariants in the database",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const db = yield* fixtureDatabaseUrl
          const markets = yield* Effect.provide(databaseInvariants, pgClientLayer(Redacted.make(db.url)))
          expect(markets).toBeGreaterThanOrEqual(20)
        })
      ),
    60_000
  )
})
