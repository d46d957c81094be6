/**
 * The record, replay and synthetic commands as a user runs them: real processes, real HTTP.
 * A synthetic chain is replayed by one process and recorded from it by another; the recording
 * must replay to the same eth_getLogs answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { Rpc } from "../../tools/recording/recorder.js"
import { freePort, runCli } from "../support/process.js"

let dir: string
beforeAll(async () => {
  dir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-cli-"))
})
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true })
})

describe("record, replay and synthetic commands", () => {
  it("generate, serve, record from the served chain, and serve the recording with the same answers", async () => {
    const source = Path.join(dir, "source.ndjson.gz")
    const generate = runCli(["synthetic", "--out", source, "--events", "3000", "--seed", "8"], { LOG_LEVEL: "info" })
    expect(await generate.exited).toBe(0)
    const deployment = Path.join(dir, "source.deployment.json")
    expect(JSON.parse(await fs.readFile(deployment, "utf8"))).toMatchObject({ chainId: 130, deployBlock: 1000 })

    const sourcePort = await freePort()
    const served = runCli(["replay", "--recording", source, "--port", String(sourcePort)], {})
    const copy = Path.join(dir, "copy.ndjson.gz")
    try {
      await served.waitFor(/message=replaying/)
      const record = runCli(["record", "--rpc", `http://127.0.0.1:${sourcePort}`, "--deployment", deployment, "--out", copy], {})
      expect(await record.exited).toBe(0)
      expect(record.output()).toMatch(/message=recorded/)

      const copyPort = await freePort()
      const replayed = runCli(["replay", "--recording", copy, "--port", String(copyPort)], {})
      try {
        await replayed.waitFor(/message=replaying/)
        const a = new Rpc(`http://127.0.0.1:${sourcePort}`)
        const b = new Rpc(`http://127.0.0.1:${copyPort}`)
        expect(await b.call("eth_blockNumber")).toBe(await a.call("eth_blockNumber"))
        const filter = [{ fromBlock: "0x3e8", toBlock: "latest" }]
        const [x, y] = await Promise.all([a.call<Array<unknown>>("eth_getLogs", filter), b.call<Array<unknown>>("eth_getLogs", filter)])
        expect(y.length).toBeGreaterThan(0)
        expect(y).toEqual(x)
      } finally {
        replayed.child.kill("SIGINT")
        await replayed.exited
      }
    } finally {
      served.child.kill("SIGINT")
      await served.exited
    }
  }, 60_000)
})
