/**
 * The live devnet's keeper when anvil dies with its state file cut short (anvil rewrites it in
 * place every few seconds; a kill during the write leaves half a file that anvil refuses): the
 * keeper sets the file aside and starts anvil from the copy it took when anvil last loaded its
 * state, on the same URL, and says so.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { existsSync, readdirSync, statSync, truncateSync } from "node:fs"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { execFileSync } from "node:child_process"
import { startLiveDevnet, type LiveDevnet } from "../../tools/devnet/live.js"
import { eventually } from "../support/probes.js"

let dataDir: string
let live: LiveDevnet | undefined
beforeAll(async () => {
  dataDir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-keeper-"))
})
afterAll(async () => {
  await live?.stop()
  await fs.rm(dataDir, { recursive: true, force: true })
}, 60_000)

const blockNumber = async (url: string) => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] })
  })
  return Number(((await response.json()) as { result: string }).result)
}

/** Our anvil: the anvil process below this test's process (under the keeper it spawned), never another test's. */
const ourAnvil = () => {
  const rows = execFileSync("ps", ["-e", "-o", "pid=,ppid=,args="], { encoding: "utf8" })
    .split("\n")
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((m) => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3]! }))
  const keepers = rows.filter((r) => r.ppid === process.pid).map((r) => r.pid)
  return rows.filter((r) => keepers.includes(r.ppid) && /\/anvil\s/.test(r.args)).map((r) => r.pid)
}

describe("the devnet keeper", () => {
  it("anvil killed with its state file cut short: restarted from the last state it loaded, on the same URL, and the log says so", async () => {
    const lines: Array<{ message: string; fields: Record<string, unknown> }> = []
    live = await startLiveDevnet({ dataDir, log: (message, fields = {}) => void lines.push({ message, fields }) })
    const url = live.url
    const statePath = Path.join(dataDir, "devnet", "anvil-state.json")
    // The keeper's copy of what anvil loaded (taken once anvil listens).
    await eventually("the keeper's copy of the loaded state", () => existsSync(`${statePath}.loaded`))
    const restarts: Array<number> = []
    live.onRestart(() => restarts.push(Date.now()))
    const found = ourAnvil()
    expect(found).toHaveLength(1)
    const pid = found[0]
    // The state file as a kill during a dump leaves it, and the kill right after (no dump can complete
    // in between: one takes ~0.1 s, and one under way when the file is cut leaves it unreadable too).
    truncateSync(statePath, Math.floor(statSync(statePath).size / 2))
    process.kill(pid!, "SIGKILL")

    await eventually("the restart from the loaded copy", () => lines.some((l) => /from the state it loaded last/.test(l.message)), 90_000)
    expect(lines.map((l) => l.message)).toContainEqual(expect.stringMatching(/^devnet: anvil died \(SIGKILL\)/))
    expect(lines.map((l) => l.message)).toContainEqual(expect.stringMatching(/^devnet: anvil did not start again; its keeper retries/))
    expect(lines.find((l) => /from the state it loaded last/.test(l.message))!.fields).toMatchObject({ rpc_url: url, same_url: true })
    expect(await blockNumber(url)).toBeGreaterThanOrEqual(live.manifest.stateHead.number)
    expect(restarts).toHaveLength(1)
    // The cut file is kept aside, not loaded.
    expect(readdirSync(Path.dirname(statePath)).filter((name) => name.endsWith(".unreadable"))).toHaveLength(1)
  }, 180_000)
})
