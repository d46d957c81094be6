/**
 * The account-abstraction part of the live devnet's additions (`live-state.ts`): the canonical
 * EntryPoint v0.7, the canonical SimpleAccountFactory v0.7 (ECDSA accounts), the project's
 * smart-account factory (WebAuthn passkey accounts) and the verifying paymaster
 * (tools/devnet/contracts/Aa.sol), the paymaster deposited and staked in the EntryPoint.
 *
 * The EntryPoint and the SimpleAccountFactory are deployed the way they are on every public
 * chain: their published creation code (@account-abstraction/contracts 0.7.0 artifacts) through
 * the deterministic CREATE2 deployer anvil ships, with the published salts, which lands them at
 * 0x0000000071727De22E5E9d8BAf0edAc6f37da032 (with its own SenderCreator) and
 * 0x91E60e0613810449d098b0b5Ec8b51A0FE8c8985 (with its SimpleAccount implementation): the
 * addresses stock clients (permissionless `toSimpleSmartAccount`) use by default. No
 * anvil_setCode, so their immutables are their own.
 */
import { createRequire } from "node:module"
import { concat, encodeAbiParameters, getContractAddress, parseEther, type Hex } from "viem"
import { ENTRY_POINT_V07, SIMPLE_ACCOUNT_FACTORY_V07 } from "../../schema/protocol/aa.js"
import type { Address, DevnetClient } from "./client.js"

/** Arachnid's deterministic deployment proxy, present on anvil from genesis. */
export const DETERMINISTIC_DEPLOYER = "0x4e59b44847b379578588920ca78fbf26c0b4956c" as Address
/** The salt the EntryPoint v0.7 was deployed with everywhere. */
const ENTRY_POINT_SALT = "0x90d8084deab30c2a37c45e8d47f49f2f7965183cb6990a98943ef94940681de3" as Hex
/** The salt the SimpleAccountFactory v0.7 was deployed with everywhere (zero). */
const SIMPLE_ACCOUNT_FACTORY_SALT = `0x${"00".repeat(32)}` as Hex

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
  /** The project's factory (tools/devnet/contracts/Aa.sol): the WebAuthn passkey accounts'. */
  readonly smartAccountFactory: Address
  /** The canonical SimpleAccountFactory v0.7: ECDSA accounts (`createAccount(address owner, uint256 salt)`). */
  readonly simpleAccountFactory: Address
  readonly paymaster: Address
  /** Mnemonic account index of the paymaster's owner and default signer. */
  readonly paymasterAccount: number
  /** Mnemonic account indices of the devnet bundler's keys. */
  readonly bundlerAccounts: { readonly utility: number; readonly executor: number }
}

const publishedCreationCode = (artifact: "EntryPoint" | "SimpleAccountFactory"): Hex => {
  const require = createRequire(import.meta.url)
  return (require(`@account-abstraction/contracts/artifacts/${artifact}.json`) as { bytecode: Hex }).bytecode
}

/**
 * Deploys `creationCode` through the deterministic deployer with `salt`, checking first that it
 * lands at `expected` (a different artifact or salt would put the contract where no stock client
 * looks) and after that it has code there.
 */
const deployDeterministic = async (client: DevnetClient, name: string, salt: Hex, creationCode: Hex, expected: Address) => {
  const landed = getContractAddress({ opcode: "CREATE2", from: DETERMINISTIC_DEPLOYER, salt, bytecode: creationCode })
  if (landed.toLowerCase() !== expected) throw new Error(`the ${name} creation code would land at ${landed}, not ${expected}`)
  await client.sendRaw(PAYMASTER_ACCOUNT, DETERMINISTIC_DEPLOYER, concat([salt, creationCode]))
  if ((await client.public.getCode({ address: expected })) === undefined) throw new Error(`the ${name} was not deployed`)
}

export const deployAccountAbstraction = async (client: DevnetClient): Promise<AaDeployment> => {
  await deployDeterministic(client, "EntryPoint", ENTRY_POINT_SALT, publishedCreationCode("EntryPoint"), ENTRY_POINT_V07)
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
  // Last, so the transactions before it (and the addresses they create) are what they were before it.
  // The factory's constructor takes the EntryPoint (and creates its SimpleAccount implementation).
  const simpleFactoryCode = concat([
    publishedCreationCode("SimpleAccountFactory"),
    encodeAbiParameters([{ type: "address" }], [ENTRY_POINT_V07])
  ])
  await deployDeterministic(client, "SimpleAccountFactory", SIMPLE_ACCOUNT_FACTORY_SALT, simpleFactoryCode, SIMPLE_ACCOUNT_FACTORY_V07)
  return {
    entryPoint: ENTRY_POINT_V07,
    smartAccountFactory: factory.address,
    simpleAccountFactory: SIMPLE_ACCOUNT_FACTORY_V07,
    paymaster: paymaster.address,
    paymasterAccount: PAYMASTER_ACCOUNT,
    bundlerAccounts: { utility: BUNDLER_UTILITY_ACCOUNT, executor: BUNDLER_EXECUTOR_ACCOUNT }
  }
}
