/**
 * `predix export` as a user runs it next to `npm start` (embedded Postgres, no DATABASE_URL):
 * it finds the running service's database through DATA_DIR, exports it while the service keeps
 * serving, and, once the service is stopped, starts the embedded cluster for itself and stops
 * it again.
 */
import { describe, expect, it } from "vitest"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { Effect } from "effect"
import { FIXTURE_RECORDING } from "../../src/fixture-recording.js"
import { ReplayChain } from "../../tools/replay/chain.js"
import { freePort, isAlive, runCli } from "../support/process.js"
import { duckRows, withDuck } from "./support.js"

const connectionOf = async (dataDir: string) =>
  JSON.parse(await fs.readFile(Path.join(dataDir, "postgres", "connection.json"), "utf8")) as { pid: number }

describe("export next to the running service", () => {
  it("reads the running embedded Postgres without stopping the service, and starts the cluster itself when nothing runs", async () => {
    expect(process.env["DATABASE_URL"]).toBeUndefined()
    const fixture = await ReplayChain.load(FIXTURE_RECORDING)
    fixture.advanceAll()
    const dataDir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-export-service-"))
    await fs.chmod(dataDir, 0o755)
    try {
      const indexerPort = await freePort()
      const service = runCli(["start"], {
        // The committed fixture, replayed (the default is a live devnet, whose head keeps moving).
        CHAIN: "fixture",
        DATA_DIR: dataDir,
        PG_PORT: "0",
        INDEXER_PORT: String(indexerPort),
        BACKEND_PORT: String(await freePort()),
        LOG_LEVEL: "info"
      })
      await service.waitFor(new RegExp(`message="following the tip" .*\\bblock=${fixture.headNumber}\\b`), 120_000)

      const out = Path.join(dataDir, "snapshot.duckdb")
      const exported = runCli(["export", "--out", out, "--parquet", Path.join(dataDir, "parquet")], {
        DATA_DIR: dataDir,
        LOG_LEVEL: "info"
      })
      expect(await exported.exited, exported.output()).toBe(0)
      expect(exported.output()).toMatch(/message=exporting .*source="running embedded Postgres"/)
      expect(exported.output()).toMatch(new RegExp(`message="export written" .*\\bblock=${fixture.finalizedNumber}\\b`))

      // The service never stopped.
      expect(service.child.exitCode).toBeNull()
      expect((await fetch(`http://127.0.0.1:${indexerPort}/api/health`)).status).toBe(200)
      const counts = await Effect.runPromise(
        withDuck(out, (db) => duckRows(db, `select (select count(*) from trade)::INTEGER, (select block_number::INTEGER from manifest)`))
      )
      expect(counts[0]![0]).toBeGreaterThan(50)
      expect(counts[0]![1]).toBe(fixture.finalizedNumber)

      service.child.kill("SIGINT")
      expect(await service.exited).toBe(0)

      // Nothing running: the export starts the embedded cluster, refreshes, and stops it again.
      const alone = runCli(["export", "--out", out], { DATA_DIR: dataDir, PG_PORT: "0", LOG_LEVEL: "info" })
      expect(await alone.exited, alone.output()).toBe(0)
      expect(alone.output()).toMatch(/source="embedded Postgres started for the export"/)
      expect(alone.output()).toMatch(/message="export written" .*mode=incremental/)
      expect(isAlive((await connectionOf(dataDir)).pid)).toBe(false)
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true })
    }
  }, 240_000)
})
