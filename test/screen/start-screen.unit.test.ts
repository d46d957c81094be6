/**
 * The start screen as a view of log records, without processes: what it draws from which line,
 * what it refuses to show, and the devnet accounts it derives.
 */
import { describe, expect, it } from "vitest"
import { mnemonicToAccount } from "viem/accounts"
import { bytesToHex } from "viem"
import { devnetAccounts, DEVNET_MNEMONIC, moreAccounts } from "../../src/screen/devnet-accounts.js"
import { forwardedRecord, type LogRecord } from "../../src/screen/log-record.js"
import { chooseOutput } from "../../src/screen/output.js"
import { displayUrl, plainStyle, progressLine, visible } from "../../src/screen/render.js"
import { StartScreen } from "../../src/screen/start-screen.js"
import { PinnedTerminal } from "../../src/screen/terminal.js"

const record = (message: string, fields: Record<string, string | number> = {}, level = "INFO"): LogRecord => ({
  time: Date.UTC(2026, 10, 27, 15, 0, 0),
  level,
  message,
  fields: Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, String(v)]))
})

/** A screen writing into a string, as a terminal of `columns` would receive it. */
const screenOnString = (columns = 120) => {
  let out = ""
  const terminal = new PinnedTerminal({ write: (text: string) => void (out += text), columns })
  const screen = new StartScreen(
    { chainId: 130, chain: "RPC_URL", rpc: "https://rpc.example", bundler: "none", servers: { indexer: true, backend: true } },
    terminal,
    plainStyle
  )
  return { screen, out: () => out }
}

describe("start screen", () => {
  it("waits for both servers' URLs, then shows the banner; draws the backfill bar in place and leaves a summary line", () => {
    const { screen, out } = screenOnString()
    screen.log(record("listening", { server: "indexer", url: "http://127.0.0.1:42069" }))
    expect(out()).toBe("")
    screen.log(record("listening", { server: "backend", url: "http://127.0.0.1:3000" }))
    expect(out()).toContain("Indexer API http://127.0.0.1:42069")
    expect(out()).toContain("Docs        http://127.0.0.1:42069/api/docs")
    expect(out()).toContain("WebSocket   ws://127.0.0.1:3000/ws/realtime")
    expect(out()).toContain("Chain id    130")
    const before = out().length
    screen.log(record("indexed", { from: 1, block: 500, target: 1000, events: 2000, events_per_s: 1234, eta_s: 75, elapsed_s: 2.1 }))
    // Redrawn in place: erase the line, the bar, no newline.
    expect(out().slice(before)).toBe("\r\x1b[2KBackfill ████████████░░░░░░░░░░░░ 500/1,000 blocks  50%  1,234 events/s  ETA 1m 15s")
    screen.log(record("indexed", { from: 1, block: 1000, target: 1000, events: 3000, events_per_s: 1500, eta_s: 0, elapsed_s: 3.3 }))
    expect(out()).toContain("backfill done: blocks 1-1000 (1,000), 5,000 events in 3s, 1,500 events/s\n")
    screen.log(record("following the tip", { block: 1064, head: 1064, finalized: 1000, reorgs: 0, unfinalized: 64 }))
    expect(out().endsWith("\r\x1b[2KFollowing the tip  block 1064  ·  head 1064  ·  finalized 1000  ·  0 reorgs")).toBe(true)
    // Any other line is printed above the status line, which is drawn again under it.
    screen.log(record("faucet: paid", { address: "0xabc", tx_hash: "0xdef" }))
    expect(
      out().endsWith(
        "15:00:00 INFO  faucet: paid address=0xabc tx_hash=0xdef\nFollowing the tip  block 1064  ·  head 1064  ·  finalized 1000  ·  0 reorgs"
      )
    ).toBe(true)
    screen.close()
    expect(out().endsWith("\r\x1b[2K")).toBe(true)
  })

  it("never lets the status line wrap: it is cut to the terminal's width", () => {
    const line = progressLine(
      { from: 1, block: 5, target: 1_000_000_000, events: 1, eventsPerSecond: 99_999_999, etaSeconds: 1e9, elapsedSeconds: 1 },
      40,
      plainStyle
    )
    expect(visible(line).length).toBeLessThanOrEqual(40)
  })

  it("shows a configured endpoint without its path, query or credentials (where API keys sit)", () => {
    expect(displayUrl("https://eth-mainnet.g.alchemy.com/v2/SECRETKEY")).toBe("https://eth-mainnet.g.alchemy.com/…")
    expect(displayUrl("https://api.pimlico.io/v2/130/rpc?apikey=SECRET")).toBe("https://api.pimlico.io/…")
    expect(displayUrl("wss://user:pass@node.example:8546")).toBe("wss://node.example:8546/…")
    expect(displayUrl("http://127.0.0.1:8545")).toBe("http://127.0.0.1:8545")
  })

  it("lists the devnet mnemonic's accounts with anvil's addresses and keys, only once showDevnet is called", () => {
    const accounts = devnetAccounts(true)
    expect(accounts).toHaveLength(10)
    for (const index of [0, 1, 9]) {
      const expected = mnemonicToAccount(DEVNET_MNEMONIC, { addressIndex: index })
      expect(accounts[index]!.address).toBe(expected.address.toLowerCase())
      expect(accounts[index]!.privateKey).toBe(bytesToHex(expected.getHdKey().privateKey!))
    }
    expect(accounts[0]!.privateKey).toBe("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80")
    const { screen, out } = screenOnString(200)
    screen.log(record("listening", { server: "indexer", url: "http://127.0.0.1:1" }))
    screen.log(record("listening", { server: "backend", url: "http://127.0.0.1:2" }))
    expect(out()).not.toContain(accounts[0]!.privateKey)
    screen.showDevnet("http://127.0.0.1:8545", DEVNET_MNEMONIC, accounts, moreAccounts)
    expect(out()).toContain(`(0) ${accounts[0]!.address}  key ${accounts[0]!.privateKey}  admin (launches markets)`)
    expect(out()).toContain("leave 18 (paymaster signer), 19 (faucet), 20-21 (bundler) to the service")
  })

  it("chooses logfmt off a terminal and with LOG_FORMAT=logfmt, the parent's channel in a forwarding child", () => {
    expect(chooseOutput("auto", { stdoutIsTty: true, toParent: false })).toBe("screen")
    expect(chooseOutput("auto", { stdoutIsTty: false, toParent: false })).toBe("logfmt")
    expect(chooseOutput("logfmt", { stdoutIsTty: true, toParent: false })).toBe("logfmt")
    expect(chooseOutput("auto", { stdoutIsTty: true, toParent: true })).toBe("parent")
  })

  it("takes only well-formed records from the IPC channel", () => {
    const good = record("indexed", { block: 1 })
    expect(forwardedRecord({ predixLog: good })).toEqual(good)
    expect(forwardedRecord({ predixLog: { ...good, fields: { block: 1 } } })).toBeUndefined()
    expect(forwardedRecord({ predixLog: { ...good, time: "now" } })).toBeUndefined()
    expect(forwardedRecord({ other: true })).toBeUndefined()
    expect(forwardedRecord("text")).toBeUndefined()
  })
})
