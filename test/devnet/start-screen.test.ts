/**
 * The default `npm start` (the live devnet) on a terminal (a real pseudo-terminal, util-linux
 * `script`): the start screen shows the URLs, the chain id, the devnet's funded accounts with
 * their keys, the backfill of the devnet's history with its events/s, then the tip. The bundler
 * is a configured BUNDLER_URL (no alto: seconds of CPU this test does not need), shown without
 * its API key.
 */
import { describe, expect, it } from "vitest"
import { Effect } from "effect"
import { devnetAccounts } from "../../src/screen/devnet-accounts.js"
import { freePort } from "../support/process.js"
import { runCliOnTerminal } from "../support/pty.js"
import { tempDir } from "../support/postgres.js"

describe("predix start on a terminal, live devnet", () => {
  it("shows URLs, chain id, the funded accounts with their keys and the backfill with events/s; Ctrl+C stops it", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir("predix-screen-devnet")
      const ports = { INDEXER_PORT: String(yield* Effect.promise(freePort)), BACKEND_PORT: String(yield* Effect.promise(freePort)) }
      const app = runCliOnTerminal(["start"], {
        ...ports,
        DATA_DIR: dataDir,
        PG_PORT: "0",
        LOG_LEVEL: "info",
        DEVNET_ACTIVITY: "off",
        BUNDLER_URL: "http://127.0.0.1:9/v2/130/rpc?apikey=bundler-secret"
      })
      yield* Effect.addFinalizer(() => Effect.sync(() => app.child.kill("SIGKILL")))
      yield* Effect.promise(() => app.waitFor(/^ {2}Chain id {4}130$/m, 240_000))
      const text = app.output()
      expect(text).toMatch(/predix · chain 130 · live devnet/)
      expect(text).toMatch(new RegExp(`Indexer API http://127\\.0\\.0\\.1:${ports.INDEXER_PORT} `))
      expect(text).toMatch(new RegExp(`Docs {8}http://127\\.0\\.0\\.1:${ports.INDEXER_PORT}/api/docs`))
      expect(text).toMatch(new RegExp(`Backend API http://127\\.0\\.0\\.1:${ports.BACKEND_PORT} `))
      expect(text).toMatch(new RegExp(`WebSocket {3}ws://127\\.0\\.0\\.1:${ports.BACKEND_PORT}/ws/realtime`))
      // The devnet's own RPC, the URL a wallet is pointed at (loopback, a new port each start).
      const rpc = /^ {2}RPC {9}(http:\/\/127\.0\.0\.1:\d+)$/m.exec(text)?.[1]
      expect(rpc).toBeDefined()
      expect(text).toContain(`rpc_url=${rpc}`)
      expect(text).toContain("Bundler     http://127.0.0.1:9/…")
      expect(app.raw()).not.toContain("bundler-secret")
      // The accounts with their keys, anvil's.
      yield* Effect.promise(() => app.waitFor(/leave 18 \(paymaster signer\)/))
      for (const account of devnetAccounts(false))
        expect(app.output()).toContain(`(${account.index}) ${account.address}  key ${account.privateKey}`)
      expect(app.output()).toContain(
        "(0) 0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266  key 0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
      )
      // The devnet's history backfilled (events/s in the summary; the bar itself when it takes more than a batch), then the tip.
      const done = yield* Effect.promise(() => app.waitFor(/backfill done: blocks 1-\d+ \([\d,]+\), [\d,]+ events in \d/, 240_000))
      expect(done).toMatch(/[\d,]+ events\/s$/)
      yield* Effect.promise(() => app.waitFor(/Following the tip {2}block \d+/, 240_000))
      expect(app.output()).not.toMatch(/timestamp=|level=INFO/)
      app.interrupt()
      expect(yield* Effect.promise(() => app.exited)).toBe(0)
    }).pipe(Effect.scoped, Effect.runPromise))
})
