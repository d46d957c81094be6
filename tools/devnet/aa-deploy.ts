/**
 * The account-abstraction part of the live devnet's additions (`live-state.ts`): the canonical
 * EntryPoint v0.7, the smart-account factory and the verifying paymaster (tools/devnet/contracts/Aa.sol),
 * the paymaster deposited and staked in the EntryPoint.
 *
 * The EntryPoint is deployed the way it is on every public chain: its published creation code
 * (@account-abstraction/contracts 0.7.0 artifacts) through the deterministic CREATE2 deployer
 * anvil ships, with the published salt, which lands it at 0x0000000071727De22E5E9d8BAf0edAc6f37da032
 * together with its own SenderCreator (no anvil_setCode, so its immutables are its own).
 */
import { createRequire } from "node:module"
import { concat, getContractAddress, parseEther, type Hex } from "viem"
import { ENTRY_POINT_V07 } from "../../schema/protocol/aa.js"
import type { Address, DevnetClient } from "./client.js"

/** Arachnid's deterministic deployment proxy, present on anvil from genesis. */
export const DETERMINISTIC_DEPLOYER = "0x4e59b44847b379578588920ca78fbf26c0b4956c" as Address
/** The salt the EntryPoint v0.7 was deployed with everywhere. */
const ENTRY_POINT_SALT = "0x90d8084deab30c2a37c45e8d47f49f2f7965183cb6990a98943ef94940681de3" as Hex

/** Owner of the paymaster and its default signer (a funded mnemonic account nothing else uses). */
export const PAYMASTER_ACCOUNT = 18
/** The bundler's utility (funds executors, deploys its simulation contracts) and executor accounts. */
export const BUNDLER_UTILITY_ACCOUNT = 20
export const BUNDLER_EXECUTOR_ACCOUNT = 21
/** What the paymaster holds in the EntryPoint: a deposit that pays for gas, and the stake. */
export const PAYMASTER_DEPOSIT = parseEther("1000")
export const PAYMASTER_STAKE = parseEther("1")
export const PAYMASTER_UNSTAKE_DELAY_SECONDS = 86_400

export interface AaDeployment {
  readonly entryPoint: Address
  readonly smartAccountFactory: Address
  readonly paymaster: Address
  /** Mnemonic account index of the paymaster's owner and default signer. */
  readonly paymasterAccount: number
  /** Mnemonic account indices of the devnet bundler's keys. */
  readonly bundlerAccounts: { readonly utility: number; readonly executor: number }
}

const entryPointCreationCode = (): Hex => {
  const require = createRequire(import.meta.url)
  return (require("@account-abstraction/contracts/artifacts/EntryPoint.json") as { bytecode: Hex }).bytecode
}

export const deployAccountAbstraction = async (client: DevnetClient): Promise<AaDeployment> => {
  const creationCode = entryPointCreationCode()
  const landed = getContractAddress({ opcode: "CREATE2", from: DETERMINISTIC_DEPLOYER, salt: ENTRY_POINT_SALT, bytecode: creationCode })
  if (landed.toLowerCase() !== ENTRY_POINT_V07)
    throw new Error(`the EntryPoint creation code would land at ${landed}, not ${ENTRY_POINT_V07}`)
  await client.sendRaw(PAYMASTER_ACCOUNT, DETERMINISTIC_DEPLOYER, concat([ENTRY_POINT_SALT, creationCode]))
  if ((await client.public.getCode({ address: ENTRY_POINT_V07 })) === undefined) throw new Error("the EntryPoint was not deployed")
  const factory = await client.deploy(PAYMASTER_ACCOUNT, "SmartAccountFactory", [ENTRY_POINT_V07])
  const paymaster = await client.deploy(PAYMASTER_ACCOUNT, "VerifyingPaymaster", [
    ENTRY_POINT_V07,
    client.address(PAYMASTER_ACCOUNT),
    client.address(PAYMASTER_ACCOUNT)
  ])
  await client.send(PAYMASTER_ACCOUNT, "VerifyingPaymaster", paymaster.address, "deposit", [], PAYMASTER_DEPOSIT)
  await client.send(
    PAYMASTER_ACCOUNT,
    "VerifyingPaymaster",
    paymaster.address,
    "addStake",
    [PAYMASTER_UNSTAKE_DELAY_SECONDS],
    PAYMASTER_STAKE
  )
  return {
    entryPoint: ENTRY_POINT_V07,
    smartAccountFactory: factory.address,
    paymaster: paymaster.address,
    paymasterAccount: PAYMASTER_ACCOUNT,
    bundlerAccounts: { utility: BUNDLER_UTILITY_ACCOUNT, executor: BUNDLER_EXECUTOR_ACCOUNT }
  }
}
