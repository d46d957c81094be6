/**
 * Recorder and replay against a real anvil node: a small contract emits logs (one of them a
 * MarketCreated announcing two "token" addresses that emit logs of their own), the chain reorgs
 * through anvil's reorg RPC, and the recording must replay to the node's own answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { spawn, type ChildProcess } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import solc from "solc"
import { createTestClient, createWalletClient, http, publicActions, type Hex } from "viem"
import { mnemonicToAccount } from "viem/accounts"
import type { Deployment } from "../../schema/deployment.js"
import type { BlockRecord } from "../../tools/recording/format.js"
import { readRecords } from "../../tools/recording/io.js"
import { Recorder, Rpc } from "../../tools/recording/recorder.js"
import { ReplayChain } from "../../tools/replay/chain.js"
import { serveReplay } from "../../tools/replay/server.js"
import { freePort } from "../support/process.js"

const SOURCE = `
pragma solidity ^0.8.24;
contract Emitter {
  event MarketCreated(uint256 indexed marketId, address indexed creator, address indexed oracle, address yesToken, address noToken, uint256 endTime, string question);
  event Ping(uint256 indexed n, bytes data);
  uint256 public count;
  function create(address yes, address no) external { count++; emit MarketCreated(count, msg.sender, address(0), yes, no, 1000, "q?"); }
  function ping(bytes calldata data) external { count++; emit Ping(count, data); }
}
contract Token {
  event Transfer(address indexed from, address indexed to, uint256 value);
  function move(address to, uint256 value) external { emit Transfer(msg.sender, to, value); }
}`

const compile = () => {
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: "Solidity",
        sources: { "t.sol": { content: SOURCE } },
        settings: { outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } } }
      })
    )
  ) as { contracts: { "t.sol": Record<string, { abi: Array<unknown>; evm: { bytecode: { object: string } } }> } }
  return output.contracts["t.sol"]
}

const MNEMONIC = "test test test test test test test test test test test junk"
let anvil: ChildProcess
let rpcUrl: string
let dir: string

beforeAll(async () => {
  const port = await freePort()
  const bin = Path.resolve("node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil")
  anvil = spawn(bin, ["--port", String(port), "--chain-id", "130", "--silent", "--mnemonic", MNEMONIC], { stdio: "ignore" })
  rpcUrl = `http://127.0.0.1:${port}`
  const rpc = new Rpc(rpcUrl)
  for (let i = 0; i < 100; i++) {
    if (
      await rpc.call("eth_chainId").then(
        () => true,
        () => false
      )
    )
      break
    await new Promise((r) => setTimeout(r, 100))
  }
  dir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-rec-"))
})

afterAll(async () => {
  anvil?.kill("SIGKILL")
  await fs.rm(dir, { recursive: true, force: true })
})

describe("recorder and replay", () => {
  it("records logs of watched and announced contracts, a reorg, and replays identical eth_getLogs answers", async () => {
    const contracts = compile()
    const account = mnemonicToAccount(MNEMONIC)
    const wallet = createWalletClient({ account, transport: http(rpcUrl) }).extend(publicActions)
    const test = createTestClient({ mode: "anvil", transport: http(rpcUrl) })
    const deploy = async (name: "Emitter" | "Token") => {
      const hash = await wallet.deployContract({
        abi: contracts[name]!.abi,
        bytecode: `0x${contracts[name]!.evm.bytecode.object}` as Hex,
        chain: null
      })
      const receipt = await wallet.waitForTransactionReceipt({ hash })
      return { address: receipt.contractAddress!.toLowerCase() as `0x${string}`, block: Number(receipt.blockNumber) }
    }
    const emitter = await deploy("Emitter")
    const yes = await deploy("Token")
    const no = await deploy("Token")
    const stranger = await deploy("Token") // never announced: its logs must not be recorded
    const send = async (address: `0x${string}`, abi: Array<unknown>, functionName: string, args: Array<unknown>) => {
      const hash = await wallet.writeContract({ address, abi, functionName, args, chain: null })
      return Number((await wallet.waitForTransactionReceipt({ hash })).blockNumber)
    }
    const tokenAbi = contracts["Token"]!.abi
    const emitterAbi = contracts["Emitter"]!.abi
    await send(yes.address, tokenAbi, "move", [account.address, 1n]) // before the announcement: not watched yet
    const announced = await send(emitter.address, emitterAbi, "create", [yes.address, no.address])
    await send(yes.address, tokenAbi, "move", [account.address, 5n])
    await send(no.address, tokenAbi, "move", [account.address, 7n])
    await send(stranger.address, tokenAbi, "move", [account.address, 9n])
    for (let i = 0; i < 5; i++) await send(emitter.address, emitterAbi, "ping", [`0x${"ab".repeat(i + 1)}`])

    const a = emitter.address
    const deployment: Deployment = {
      chainId: 130,
      diamond: a,
      router: a,
      exchange: a,
      hookProxy: a,
      marketFactory: a,
      manualOracle: a,
      priceFeedOracle: a,
      timelock: a,
      paymaster: a,
      faucet: a,
      testUsdc: a,
      poolManager: a,
      permit2: a,
      deployBlock: emitter.block
    } as Deployment
    const out = Path.join(dir, "chain.ndjson.gz")
    const recorder = await Recorder.open({ rpcUrl, deployment, out, chunkBlocks: 3, source: "test" })
    await recorder.poll()
    const beforeReorg = recorder.recordedTip

    // Reorg the last 3 blocks away (their pings vanish), then build a different future.
    await test.request({ method: "anvil_reorg" as never, params: [3, []] as never })
    for (let i = 0; i < 2; i++) await send(emitter.address, emitterAbi, "ping", ["0xcdcd"])
    await recorder.poll()
    await recorder.close()

    // The file holds the orphaned blocks and, after them, the replacing ones from the fork point.
    const blocks: Array<BlockRecord> = []
    for await (const record of readRecords(out)) if (record.t === "block") blocks.push(record)
    const reorgAt = blocks.findIndex((b, i) => i > 0 && b.number <= blocks[i - 1]!.number)
    expect(reorgAt).toBeGreaterThan(0)
    expect(blocks[reorgAt - 1]!.number).toBe(beforeReorg)
    expect(blocks[reorgAt]!.number).toBe(beforeReorg - 2)

    const chain = await ReplayChain.load(out, { finalityDepth: 64 })
    const server = await serveReplay(chain)
    try {
      chain.advanceAll()
      expect(chain.reorgCount).toBe(1)
      const node = new Rpc(rpcUrl)
      const replay = new Rpc(server.url)
      const head = await node.call<string>("eth_blockNumber")
      expect(await replay.call<string>("eth_blockNumber")).toBe(head)
      const watched = [a, yes.address, no.address]
      const filters = [
        { address: watched, fromBlock: `0x${emitter.block.toString(16)}`, toBlock: head },
        { address: a, fromBlock: `0x${emitter.block.toString(16)}`, toBlock: "latest" },
        { address: watched, topics: [null, null, [`0x${account.address.slice(2).toLowerCase().padStart(64, "0")}`]], fromBlock: "0x0" }
      ]
      for (const filter of filters) {
        const expected = await node.call<Array<Record<string, unknown>>>("eth_getLogs", [filter])
        const actual = await replay.call<Array<Record<string, unknown>>>("eth_getLogs", [filter])
        const strip = (logs: Array<Record<string, unknown>>) =>
          logs
            // A token is watched from the block that announces it, not before.
            .filter((l) => String(l["address"]).toLowerCase() === a || Number(l["blockNumber"]) >= announced)
            .map(({ address, topics, data, blockNumber, blockHash, transactionHash, logIndex, transactionIndex }) => ({
              address: String(address).toLowerCase(),
              topics,
              data,
              blockNumber,
              blockHash,
              transactionHash,
              logIndex,
              transactionIndex
            }))
        expect(strip(actual)).toEqual(strip(expected))
      }
      // Block headers agree, by number and by hash.
      for (const n of [emitter.block, Number(head) - 1, Number(head)]) {
        const tag = `0x${n.toString(16)}`
        const mine = await replay.call<{ hash: string; parentHash: string }>("eth_getBlockByNumber", [tag, false])
        const theirs = await node.call<{ hash: string; parentHash: string }>("eth_getBlockByNumber", [tag, false])
        expect({ hash: mine.hash, parentHash: mine.parentHash }).toEqual({ hash: theirs.hash, parentHash: theirs.parentHash })
        expect((await replay.call<{ hash: string }>("eth_getBlockByHash", [theirs.hash, false])).hash).toBe(theirs.hash)
      }
      // The stranger's logs were never recorded.
      const strangers = await replay.call<Array<unknown>>("eth_getLogs", [{ address: stranger.address, fromBlock: "0x0" }])
      expect(strangers).toEqual([])
    } finally {
      await server.close()
    }
  })
})
