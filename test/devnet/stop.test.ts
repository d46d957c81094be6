/**
 * The default `start` (the live devnet: anvil, the alto bundler, the indexer child) ends as soon
 * as its work has: a supervisor restarts a service only once its process is gone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { freePort, isAlive, runCli } from "../support/process.js"

let dataDir: string
beforeAll(async () => {
  dataDir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-live-stop-"))
  await fs.chmod(dataDir, 0o755)
})
afterAll(async () => {
  await fs.rm(dataDir, { recursive: true, force: true })
})

/**
 * How long the process may outlive its last log line ("embedded Postgres stopped", the last step
 * of its shutdown). Ending then is one `process.exit`, so this is a hang guard, generous for a
 * loaded machine; before, a stop-timeout timer the devnet left running kept it alive 19-20 s more.
 */
const LINGER_GUARD_MS = 10_000

describe("predix start on the live devnet, stopping", () => {
  it("ends as soon as its shutdown is done when the indexer child dies: exit 1, nothing left running", async () => {
    const ports = { INDEXER_PORT: String(await freePort()), BACKEND_PORT: String(await freePort()) }
    const app = runCli(["start"], { DATA_DIR: dataDir, PG_PORT: "0", LOG_LEVEL: "info", ...ports })
    try {
      await app.waitFor(/message=listening server=backend/, 120_000)
      // Both kept processes running (anvil and the bundler), each with its own stop timeout.
      await app.waitFor(/message="devnet: alto bundler"/, 120_000)
      const child = Number(/message="indexer process started" pid=(\d+)/.exec(app.output())?.[1])
      process.kill(child, "SIGKILL")
      await app.waitFor(/message="embedded Postgres stopped"/, 120_000)
      const exited = await Promise.race([
        app.exited,
        new Promise<"lingering">((resolve) => setTimeout(() => resolve("lingering"), LINGER_GUARD_MS))
      ])
      expect(exited).toBe(1)
      expect(app.output()).toMatch(/the indexer process exited \(signal SIGKILL\); stopping/)
      expect(isAlive(child)).toBe(false)
    } finally {
      app.child.kill("SIGKILL")
      await app.exited
    }
  }, 300_000)
})
