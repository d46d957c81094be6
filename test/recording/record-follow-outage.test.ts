/**
 * `record --follow` waits out an endpoint outage: the node (a replay server behind a TCP proxy)
 * disappears for longer than one poll's own retries while the chain moves on; the recorder stays
 * up, logs each failed attempt, and once the node is back records the rest. The recording then
 * replays to the source's canonical chain, block for block.
 */
import { describe, expect, it } from "vitest"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { generateSynthetic } from "../../tools/recording/synthetic.js"
import { ReplayChain } from "../../tools/replay/chain.js"
import { serveReplay } from "../../tools/replay/server.js"
import { runCli } from "../support/process.js"
import { startTcpProxy } from "../support/tcp-proxy.js"

const OUTAGE_MS = 4_000

describe("record --follow", () => {
  it("survives an endpoint outage and records what the chain did meanwhile", async () => {
    const dir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-record-outage-"))
    const source = Path.join(dir, "source.ndjson.gz")
    const summary = await generateSynthetic({ out: source, seed: 5, events: 3_000, users: 20, reorgEvery: 60, maxReorgDepth: 4 })
    const deployment = Path.join(dir, "deployment.json")
    await fs.writeFile(deployment, JSON.stringify(summary.deployment))
    const chain = await ReplayChain.load(source)
    const total = chain.remaining
    chain.advance(Math.floor(total / 2))
    const server = await serveReplay(chain)
    const proxy = await startTcpProxy({ host: "127.0.0.1", port: Number(new URL(server.url).port) })
    const out = Path.join(dir, "recorded.ndjson.gz")
    const recorder = runCli(
      ["record", "--rpc", `http://127.0.0.1:${proxy.port}`, "--deployment", deployment, "--out", out, "--follow", "--interval-ms", "100"],
      {}
    )
    const recordedHead = (head: number) => recorder.waitFor(new RegExp(`message=recorded .*block=${head}\\b`), 60_000)
    try {
      await recordedHead(chain.headNumber)
      proxy.cut()
      const cutAt = Date.now()
      while (Date.now() - cutAt < OUTAGE_MS) {
        chain.advance(Math.ceil(total / 40))
        await new Promise((r) => setTimeout(r, 200))
      }
      expect(recorder.child.exitCode, recorder.output()).toBeNull()
      const retries = recorder
        .output()
        .split("\n")
        .filter((l) => l.includes(`message="recording failed; retrying"`))
      expect(retries.length, recorder.output()).toBeGreaterThan(1)
      for (const line of retries) expect(line).toMatch(/ attempt=\d+ .*error=/)
      proxy.restore()
      chain.advanceAll()
      await recordedHead(chain.headNumber)
      recorder.child.kill("SIGINT")
      expect(await recorder.exited).toBe(0)

      const replayed = await ReplayChain.load(out)
      replayed.advanceAll()
      expect(replayed.headNumber).toBe(chain.headNumber)
      for (let n = summary.deployment.deployBlock; n <= chain.headNumber; n++) {
        const a = replayed.blockAt(n)
        const b = chain.blockAt(n)
        expect(a?.hash, `block ${n}`).toBe(b?.hash)
        expect(a?.logs, `block ${n}`).toEqual(b?.logs)
      }
    } finally {
      if (recorder.child.exitCode === null) recorder.child.kill("SIGKILL")
      await recorder.exited
      await proxy.close()
      await server.close()
      await fs.rm(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
