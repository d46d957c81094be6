/**
 * The live devnet's starting point, committed next to the fixture: the anvil state at the end of
 * the fixture scenario (so its blocks, hashes and logs are the fixture's), plus the contracts the
 * live chain adds (the faucet dispenser; account abstraction: the EntryPoint v0.7, the smart-account
 * factory, the verifying paymaster, `aa-deploy.ts`) and a funded faucet account.
 * `npm start` loads it instead of replaying the scenario, which takes a compile and ~25 s.
 *
 * Regenerated with the fixture (`npm run fixture`), so the two always describe one chain.
 */
import { gunzipSync } from "node:zlib"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import { maxUint256, type Abi, type Hex } from "viem"
import type { Artifacts } from "./compile.js"
import type { Address, DevnetClient } from "./client.js"
import type { Devnet } from "./deploy.js"
import { deployAccountAbstraction, type AaDeployment } from "./aa-deploy.js"

/** The mnemonic account the default faucet signs with: funded, and used by nothing else. */
export const FAUCET_ACCOUNT = 19
/** Test USDC the faucet account holds at the start (6 decimals): 100,000 claims. */
export const FAUCET_USDC_FUNDS = 1_000_000_000n * 1_000_000n

/**
 * What the live chain needs besides the anvil state: every address, and where the fixture ends.
 * The account-abstraction fields (`entryPoint`, `smartAccountFactory`, `paymaster`,
 * `paymasterAccount`, `bundlerAccounts`) are `AaDeployment`'s.
 */
export interface LiveManifest extends AaDeployment {
  readonly devnet: Devnet
  readonly faucetDispenser: Address
  readonly faucetAccount: number
  /** The last block of the scenario (the fixture's head); later blocks are the live additions. */
  readonly scenarioHead: { readonly number: number; readonly hash: Hex }
  readonly stateHead: { readonly number: number; readonly hash: Hex }
  /** The ABIs the live chain's simulation and faucet call, so a start needs no compile. */
  readonly abis: Readonly<Record<string, Abi>>
}

/** The contracts whose ABIs the manifest carries. */
const LIVE_ABIS = [
  "MarketFacet",
  "MarketFactory",
  "Router",
  "Exchange",
  "TestUsdc",
  "FaucetDispenser",
  "SmartAccountFactory",
  "SmartAccount",
  "VerifyingPaymaster"
] as const

/** The manifest's ABIs as a `DevnetClient` wants them (calls only: no bytecode, nothing to deploy). */
export const liveArtifacts = (manifest: LiveManifest): Artifacts =>
  Object.fromEntries(Object.entries(manifest.abis).map(([name, abi]) => [name, { abi, bytecode: "0x" as Hex }]))

export const manifestPathOf = (statePath: string) => statePath.replace(/\.anvil-state\.json\.gz$/, ".live.json")

/** Deploys the live additions on `client`'s chain and writes the state (gzip JSON) and its manifest. */
export const writeLiveState = async (client: DevnetClient, devnet: Devnet, statePath: string): Promise<LiveManifest> => {
  const head = await client.public.getBlock({ blockTag: "latest" })
  const dispenser = await client.deploy(FAUCET_ACCOUNT, "FaucetDispenser")
  const aa = await deployAccountAbstraction(client)
  // The admin owns TestUsdc and may mint; the faucet account approves the dispenser once.
  await client.send(0, "TestUsdc", devnet.addresses.testUsdc, "mint", [client.address(FAUCET_ACCOUNT), FAUCET_USDC_FUNDS])
  await client.send(FAUCET_ACCOUNT, "TestUsdc", devnet.addresses.testUsdc, "approve", [dispenser.address, maxUint256])
  const last = await client.public.getBlock({ blockTag: "latest" })
  const dumped = (await client.test.request({ method: "anvil_dumpState" as never })) as Hex
  const manifest: LiveManifest = {
    devnet,
    faucetDispenser: dispenser.address,
    faucetAccount: FAUCET_ACCOUNT,
    ...aa,
    scenarioHead: { number: Number(head.number), hash: head.hash },
    stateHead: { number: Number(last.number), hash: last.hash },
    abis: Object.fromEntries(LIVE_ABIS.map((name) => [name, client.abi(name)]))
  }
  mkdirSync(dirname(statePath), { recursive: true })
  // anvil_dumpState answers the gzip-compressed state as hex.
  writeFileSync(statePath, Buffer.from(dumped.slice(2), "hex"))
  writeFileSync(manifestPathOf(statePath), `${JSON.stringify(manifest, null, 2)}\n`)
  return manifest
}

/** The committed state as the JSON file anvil's `--state` reads. */
export const unpackLiveState = (statePath: string, out: string) => {
  mkdirSync(dirname(out), { recursive: true })
  writeFileSync(out, gunzipSync(readFileSync(statePath)))
}

export const readManifest = (statePath: string): LiveManifest => JSON.parse(readFileSync(manifestPathOf(statePath), "utf8")) as LiveManifest
