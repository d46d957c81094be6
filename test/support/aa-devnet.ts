/**
 * A live devnet with its own bundler for a test file: anvil from the committed live state
 * (the protocol, the EntryPoint v0.7, the factory and the funded, staked paymaster), mining each
 * transaction at once, in a scratch directory, and alto in front of it. One per file: alto takes
 * seconds to start.
 */
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { bytesToHex, type Hex } from "viem"
import { mnemonicToAccount } from "viem/accounts"
import { DEVNET_CHAIN_ID, DEVNET_MNEMONIC } from "../../tools/devnet/anvil.js"
import { startBundler } from "../../tools/devnet/bundler.js"
import { DevnetClient } from "../../tools/devnet/client.js"
import { liveArtifacts, type LiveManifest } from "../../tools/devnet/live-state.js"
import { startLiveDevnet } from "../../tools/devnet/live.js"
import type { AaChain } from "./aa.js"

export interface AaDevnet {
  readonly chain: AaChain
  readonly manifest: LiveManifest
  /** Sends as mnemonic accounts with the live contracts' ABIs (admin 0 launches markets and mints test USDC). */
  readonly client: DevnetClient
  /** The key the deployed paymaster's `verifyingSigner` is (PAYMASTER_SIGNER_KEY's devnet default). */
  readonly paymasterSignerKey: Hex
  readonly stop: () => Promise<void>
}

/** The private key of mnemonic account `index`. */
export const devnetKey = (index: number): Hex =>
  bytesToHex(mnemonicToAccount(DEVNET_MNEMONIC, { addressIndex: index }).getHdKey().privateKey!)

export const startAaDevnet = async (): Promise<AaDevnet> => {
  const dataDir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-aa-"))
  const live = await startLiveDevnet({ dataDir, automine: true, log: () => {} })
  const manifest = live.manifest
  const bundler = await startBundler({
    rpcUrl: live.url,
    entryPoint: manifest.entryPoint,
    executorKey: devnetKey(manifest.bundlerAccounts.executor),
    utilityKey: devnetKey(manifest.bundlerAccounts.utility)
  }).catch(async (error) => {
    await live.stop()
    throw error
  })
  return {
    chain: {
      rpcUrl: live.url,
      bundlerUrl: bundler.url,
      chainId: DEVNET_CHAIN_ID,
      entryPoint: manifest.entryPoint,
      smartAccountFactory: manifest.smartAccountFactory,
      paymaster: manifest.paymaster
    },
    manifest,
    client: new DevnetClient(live.url, liveArtifacts(manifest)),
    paymasterSignerKey: devnetKey(manifest.paymasterAccount),
    stop: async () => {
      await bundler.stop()
      await live.stop()
      await fs.rm(dataDir, { recursive: true, force: true })
    }
  }
}
