/**
 * `predix start` on a terminal (a real pseudo-terminal, util-linux `script`): the start screen
 * with its URLs and the backfill bar redrawn in place, on a served synthetic chain given as
 * RPC_URL (so no devnet: no keys); and LOG_FORMAT=logfmt on the same terminal keeps the logfmt
 * lines, the indexer child's included. The live devnet's screen (accounts) is
 * test/devnet/start-screen.test.ts; logfmt off a terminal is what test/start.test.ts reads.
 */
import { describe, expect, it } from "vitest"
import { Effect } from "effect"
import { devnetAccounts } from "../../src/screen/devnet-accounts.js"
import { servedSyntheticChain } from "../support/served-chain.js"
import { freePort } from "../support/process.js"
import { runCliOnTerminal } from "../support/pty.js"
import { scratchDatabaseUrl, tempDir } from "../support/postgres.js"

describe("predix start on a terminal", () => {
  it("shows the URLs and chain id, draws the backfill bar in place and its summary with events/s, hides RPC_URL's path, shows no keys; Ctrl+C stops it", () =>
    Effect.gen(function* () {
      const { server, deploymentFile } = yield* servedSyntheticChain({ seed: 7, events: 60_000, users: 60, reorgEvery: 500 })
      const dataDir = yield* tempDir("predix-screen")
      const databaseUrl = yield* scratchDatabaseUrl
      const ports = { INDEXER_PORT: String(yield* Effect.promise(freePort)), BACKEND_PORT: String(yield* Effect.promise(freePort)) }
      // The replay server answers on any path: this one stands for a provider's API key.
      const secret = "k3y-in-the-path"
      const app = runCliOnTerminal(["start"], {
        ...ports,
        DATA_DIR: dataDir,
        DATABASE_URL: databaseUrl,
        RPC_URL: `${server.url}/v2/${secret}`,
        DEPLOYMENT: deploymentFile,
        LOG_LEVEL: "info"
      })
      yield* Effect.addFinalizer(() => Effect.sync(() => app.child.kill("SIGKILL")))
      yield* Effect.promise(() => app.waitFor(/^ {2}Chain id {4}130$/m, 120_000))
      const text = app.output()
      expect(text).toMatch(new RegExp(`Indexer API http://127\\.0\\.0\\.1:${ports.INDEXER_PORT} `))
      expect(text).toMatch(new RegExp(`Docs {8}http://127\\.0\\.0\\.1:${ports.INDEXER_PORT}/api/docs`))
      expect(text).toMatch(new RegExp(`Backend API http://127\\.0\\.0\\.1:${ports.BACKEND_PORT} `))
      expect(text).toMatch(new RegExp(`WebSocket {3}ws://127\\.0\\.0\\.1:${ports.BACKEND_PORT}/ws/realtime`))
      expect(text).toContain(`RPC         ${server.url}/…`)
      expect(text).toContain("Bundler     none (BUNDLER_URL unset)")
      yield* Effect.promise(() => app.waitFor(/backfill done: blocks/, 180_000))
      yield* Effect.promise(() => app.waitFor(/Following the tip {2}block \d+/, 120_000))
      const raw = app.raw()
      // The bar, drawn in place (erase the line, draw it; no newline) with blocks, events/s and an ETA,
      // once per commit before the last: how many times depends on the machine's speed (a quiet
      // machine indexes this chain in one commit, then only the summary shows), so the test checks
      // the form of every bar drawn and the summary; the bar's drawing from each record is
      // start-screen.unit.test.ts's.
      expect(app.output()).toMatch(/backfill done: blocks \d+-\d+ \([\d,]+\), [\d,]+ events in [^,]+, [\d,]+ events\/s/)
      const bars = [...raw.matchAll(/\r\x1b\[2K(\x1b\[1mBackfill[^\r\n]*)/g)].map((m) => m[1]!.replace(/\x1b\[[0-9;]*m/g, ""))
      for (const bar of bars) expect(bar).toMatch(/^Backfill [█░]{24} [\d,]+\/[\d,]+ blocks {2}\d+% {2}[\d,]+ events\/s {2}ETA \d/)
      console.log(`backfill bar drawn ${new Set(bars).size} times: ${bars.at(-1)}`)
      // Readable lines, no logfmt; no per-block notification lines at INFO.
      expect(app.output()).not.toMatch(/timestamp=|level=INFO/)
      expect(app.output()).toMatch(/^\d\d:\d\d:\d\d INFO {2}indexer process started pid=\d+$/m)
      expect(app.output()).not.toContain("notifications: consumed indexed blocks")
      // Not the devnet: no account and no key; RPC_URL's path nowhere.
      expect(app.output()).not.toContain("Accounts")
      for (const account of devnetAccounts(true)) expect(raw).not.toContain(account.privateKey.slice(2))
      expect(raw).not.toContain(secret)
      app.interrupt()
      expect(yield* Effect.promise(() => app.exited)).toBe(0)
      // The status line is erased on the way out.
      expect(app.raw()).toMatch(/\r\x1b\[2K[^\r]*$/)
    }).pipe(Effect.scoped, Effect.runPromise))

  it("keeps logfmt on a terminal with LOG_FORMAT=logfmt, the indexer child's lines included", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir("predix-screen")
      const databaseUrl = yield* scratchDatabaseUrl
      const app = runCliOnTerminal(["start"], {
        CHAIN: "fixture",
        DATA_DIR: dataDir,
        DATABASE_URL: databaseUrl,
        INDEXER_PORT: "0",
        BACKEND_PORT: "0",
        LOG_LEVEL: "info",
        LOG_FORMAT: "logfmt"
      })
      yield* Effect.addFinalizer(() => Effect.sync(() => app.child.kill("SIGKILL")))
      yield* Effect.promise(() => app.waitFor(/message=listening server=backend/, 120_000))
      yield* Effect.promise(() => app.waitFor(/level=INFO fiber=#\d+ message="following the tip"/, 180_000))
      expect(app.raw()).not.toContain("\x1b[")
      expect(app.output()).not.toMatch(/Indexer API|Backfill/)
      app.interrupt()
      expect(yield* Effect.promise(() => app.exited)).toBe(0)
    }).pipe(Effect.scoped, Effect.runPromise))
})
