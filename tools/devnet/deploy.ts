/**
 * Deploys the devnet protocol and writes what the indexer needs: the deployment (every address of
 * the spec's "Deployed components" table plus deployBlock). Account 0 is the admin of everything;
 * account 1 reports outcomes; the fee recipient and paymaster are accounts of their own.
 */
import { keccak256, stringToBytes, toFunctionSelector, type AbiFunction } from "viem"
import type { Deployment } from "../../schema/deployment.js"
import type { Address, DevnetClient } from "./client.js"

export const ADMIN = 0
export const REPORTER = 1
export const FEE_RECIPIENT = 22
export const PAYMASTER = 23
/** Uniswap's canonical Permit2 address (the same on every chain); nothing is deployed there on the devnet. */
export const PERMIT2 = "0x000000000022d473030f116ddee9f6b43ac78ba3" as Address

export const role = (name: string) => keccak256(stringToBytes(name))
export const ROLES = {
  ADMIN: role("predix.role.admin"),
  OPERATOR: role("predix.role.operator"),
  PAUSER: role("predix.role.pauser"),
  CUT_EXECUTOR: role("predix.role.cut_executor"),
  CREATOR: role("predix.role.creator")
} as const
export const MODULE_MARKET = role("predix.module.market")

/** Timing of the devnet deployment, shortened from the protocol's so a scenario can reach them. */
export const TIMING = {
  emergencyDelay: 3600,
  sweepGrace: 86_400,
  hookUpgradeDelay: 3600,
  challengeDelay: 600,
  timelockDelay: 3600
} as const

export interface Devnet {
  readonly deployment: Deployment
  readonly addresses: {
    readonly diamond: Address
    readonly router: Address
    readonly exchange: Address
    readonly hookProxy: Address
    readonly hookImplementation: Address
    readonly marketFactory: Address
    readonly manualOracle: Address
    readonly priceFeedOracle: Address
    readonly priceFeed: Address
    readonly timelock: Address
    readonly paymaster: Address
    readonly faucet: Address
    readonly testUsdc: Address
    readonly poolManager: Address
    readonly permit2: Address
    readonly feeRecipient: Address
  }
}

/** Selectors of a facet's external functions, minus those already routed elsewhere. */
export const selectorsOf = (client: DevnetClient, contract: string, except: ReadonlyArray<string> = []): Array<`0x${string}`> =>
  client
    .abi(contract)
    .filter((item): item is AbiFunction => item.type === "function")
    .map((fn) => toFunctionSelector(fn))
    .filter((selector) => !except.includes(selector))

export const deployDevnet = async (client: DevnetClient, options: { readonly deployedVariants: boolean }): Promise<Devnet> => {
  const admin = client.address(ADMIN)
  const usdc = await client.deploy(ADMIN, "TestUsdc")
  const deployBlock = Number(usdc.receipt.blockNumber)
  const diamond = await client.deploy(ADMIN, "Diamond", [
    admin,
    usdc.address,
    client.address(FEE_RECIPIENT),
    options.deployedVariants,
    TIMING.emergencyDelay,
    TIMING.sweepGrace
  ])
  const cutSelector = toFunctionSelector("diamondCut((address,uint8,bytes4[])[],address,bytes)")
  const facets = [
    ["AdminFacet", (await client.deploy(ADMIN, "AdminFacet")).address],
    ["MarketFacet", (await client.deploy(ADMIN, "MarketFacet")).address],
    ["EventFacet", (await client.deploy(ADMIN, "EventFacet")).address]
  ] as const
  const cuts = facets.map(([name, address]) => ({
    facetAddress: address,
    action: 0,
    functionSelectors: selectorsOf(client, name, [cutSelector])
  }))
  await client.send(ADMIN, "AdminFacet", diamond.address, "diamondCut", [cuts, "0x0000000000000000000000000000000000000000", "0x"])

  const poolManager = await client.deploy(ADMIN, "PoolManager")
  const exchange = await client.deploy(ADMIN, "Exchange", [diamond.address])
  const router = await client.deploy(ADMIN, "Router", [diamond.address, exchange.address, poolManager.address, PERMIT2])
  const hookImplementation = await client.deploy(ADMIN, "MarketHook")
  const { encodeFunctionData } = await import("viem")
  const init = encodeFunctionData({
    abi: client.abi("MarketHook"),
    functionName: "initialize",
    args: [admin, diamond.address, poolManager.address, router.address]
  })
  const hookProxy = await client.deploy(ADMIN, "HookProxy", [hookImplementation.address, admin, TIMING.hookUpgradeDelay, init])
  await client.send(ADMIN, "Router", router.address, "setHook", [hookProxy.address])
  const manualOracle = await client.deploy(ADMIN, "ManualOracle", [diamond.address, admin, TIMING.challengeDelay])
  await client.send(ADMIN, "ManualOracle", manualOracle.address, "setReporter", [client.address(REPORTER), true])
  const priceFeedOracle = await client.deploy(ADMIN, "PriceFeedOracle", [diamond.address, admin])
  const priceFeed = await client.deploy(ADMIN, "PriceFeed", [8, 3_000n * 10n ** 8n])
  const timelock = await client.deploy(ADMIN, "Timelock", [admin, TIMING.timelockDelay])
  const marketFactory = await client.deploy(ADMIN, "MarketFactory", [diamond.address, hookProxy.address, poolManager.address])
  await client.send(ADMIN, "MarketHook", hookProxy.address, "setRegistrar", [marketFactory.address, true])
  const faucet = await client.deploy(ADMIN, "Faucet", [usdc.address], 1_000n * 10n ** 18n)
  await client.send(ADMIN, "TestUsdc", usdc.address, "setMinter", [faucet.address, true])

  for (const [name, account] of [
    ["ADMIN", admin],
    ["PAUSER", admin],
    ["CREATOR", admin],
    ["CREATOR", marketFactory.address]
  ] as const) {
    await client.send(ADMIN, "AdminFacet", diamond.address, "grantRole", [ROLES[name], account])
  }
  await client.send(ADMIN, "AdminFacet", diamond.address, "approveOracle", [manualOracle.address])
  await client.send(ADMIN, "AdminFacet", diamond.address, "approveOracle", [priceFeedOracle.address])

  const addresses = {
    diamond: diamond.address,
    router: router.address,
    exchange: exchange.address,
    hookProxy: hookProxy.address,
    hookImplementation: hookImplementation.address,
    marketFactory: marketFactory.address,
    manualOracle: manualOracle.address,
    priceFeedOracle: priceFeedOracle.address,
    priceFeed: priceFeed.address,
    timelock: timelock.address,
    paymaster: client.address(PAYMASTER),
    faucet: faucet.address,
    testUsdc: usdc.address,
    poolManager: poolManager.address,
    permit2: PERMIT2,
    feeRecipient: client.address(FEE_RECIPIENT)
  }
  const deployment = {
    chainId: 130,
    diamond: addresses.diamond,
    router: addresses.router,
    exchange: addresses.exchange,
    hookProxy: addresses.hookProxy,
    marketFactory: addresses.marketFactory,
    manualOracle: addresses.manualOracle,
    priceFeedOracle: addresses.priceFeedOracle,
    timelock: addresses.timelock,
    paymaster: addresses.paymaster,
    faucet: addresses.faucet,
    testUsdc: addresses.testUsdc,
    poolManager: addresses.poolManager,
    permit2: addresses.permit2,
    deployBlock
  } as Deployment
  return { deployment, addresses }
}
