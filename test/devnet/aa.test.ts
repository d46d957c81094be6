/**
 * Account abstraction on the live devnet, chain side: real anvil from the committed live state,
 * the real EntryPoint v0.7, our account, factory and paymaster, and a real alto bundler.
 * Undeployed accounts (ECDSA-owned and passkey-owned) send one sponsored user operation each that
 * deploys them, approves USDC and buys YES through the protocol's router; tampered and expired
 * operations are refused by the bundler and by the EntryPoint itself.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  BaseError,
  ContractFunctionRevertedError,
  encodeAbiParameters,
  encodeFunctionData,
  erc20Abi,
  maxUint256,
  parseAbi,
  type Address,
  type Hex
} from "viem"
import { generatePrivateKey } from "viem/accounts"
import {
  decodeAccountCalls,
  decodeWebAuthnSignature,
  P256_N,
  decodeOwner,
  encodeOwner,
  entryPointAbi,
  packUserOperation,
  paymasterHash,
  smartAccountAbi,
  verifyingPaymasterAbi,
  type AccountCall,
  type UserOperationV07
} from "../../schema/protocol/aa.js"
import { AaClient, BundlerRpcError, ecdsaSigner, softwarePasskey, sponsorUserOperation, type AccountSigner } from "../support/aa.js"
import { startAaDevnet, type AaDevnet } from "../support/aa-devnet.js"

const USDC = 1_000_000n
const BUY_YES = 0
const ADMIN = 0
const ZERO = "0x0000000000000000000000000000000000000000" as Address
const MARKET_ABI = parseAbi([
  "function marketCount() view returns (uint256)",
  "function marketTokens(uint256 marketId) view returns (address yes, address no)"
])
const ROUTER_ABI = parseAbi([
  "function trade(uint8 tradeType, uint256 marketId, uint256 amountIn, uint256 minOut, address recipient, uint256 maxFills, uint256 deadline, address referrer) returns (uint256, uint256, uint256)"
])

let aa: AaDevnet
let client: AaClient
let marketId: bigint
let yesToken: Address

beforeAll(async () => {
  aa = await startAaDevnet()
  client = new AaClient(aa.chain)
  // A fresh open market (the committed state's markets may have ended by the wall clock).
  const d = aa.manifest.devnet.addresses
  const end = BigInt(await aa.client.timestamp()) + 7n * 86_400n
  await aa.client.send(ADMIN, "MarketFactory", d.marketFactory, "launch", [
    "AA test market: will it go up?",
    end,
    d.manualOracle,
    3_000n * USDC
  ])
  marketId = await client.public.readContract({ address: d.diamond, abi: MARKET_ABI, functionName: "marketCount" })
  yesToken = (await client.public.readContract({ address: d.diamond, abi: MARKET_ABI, functionName: "marketTokens", args: [marketId] }))[0]
}, 180_000)

afterAll(async () => {
  await aa?.stop()
})

/** approve(router, amount) on USDC, then router.trade(BUY_YES) for the account itself. */
const approveAndBuyYes = (account: Address, amount: bigint): ReadonlyArray<AccountCall> => {
  const d = aa.manifest.devnet.addresses
  return [
    { target: d.testUsdc, value: 0n, data: encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [d.router, amount] }) },
    {
      target: d.router,
      value: 0n,
      data: encodeFunctionData({
        abi: ROUTER_ABI,
        functionName: "trade",
        args: [BUY_YES, marketId, amount, 1n, account, 10n, maxUint256, ZERO]
      })
    }
  ]
}

const balanceOf = (token: Address, owner: Address) =>
  client.public.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [owner] })
const chainNow = async () => Number((await client.public.getBlock()).timestamp)

/** A sponsored, signed operation of `signer`'s account buying YES for `amount` USDC (minted to it first). */
const sponsoredBuy = async (signer: AccountSigner, amount: bigint, window?: { validUntil: number; validAfter: number }) => {
  const account = await client.accountAddress(signer.owner)
  await aa.client.send(ADMIN, "TestUsdc", aa.manifest.devnet.addresses.testUsdc, "mint", [account, amount])
  const prepared = await client.prepare(signer, approveAndBuyYes(account, amount), { sponsored: true })
  const sponsorWindow = window ?? { validUntil: (await chainNow()) + 600, validAfter: 0 }
  const sponsored = await sponsorUserOperation(prepared, {
    chainId: aa.chain.chainId,
    paymaster: aa.chain.paymaster,
    signerKey: aa.paymasterSignerKey,
    window: sponsorWindow
  })
  return { account, op: await client.sign(sponsored, signer), window: sponsorWindow }
}

/** handleOps sent straight to the EntryPoint by an EOA (no bundler), simulated: the EntryPoint's verdict. */
const entryPointVerdict = async (op: UserOperationV07): Promise<string> => {
  try {
    await client.public.simulateContract({
      address: aa.chain.entryPoint,
      abi: entryPointAbi,
      functionName: "handleOps",
      args: [[packUserOperation(op)], aa.client.address(ADMIN)],
      account: aa.client.address(ADMIN)
    })
    return "accepted"
  } catch (error) {
    // FailedOp(uint256 opIndex, string reason) / FailedOpWithRevert(opIndex, reason, inner)
    const reverted = error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : null
    const data = reverted instanceof ContractFunctionRevertedError ? reverted.data : undefined
    if (data?.errorName === "FailedOp" || data?.errorName === "FailedOpWithRevert") return String(data.args?.[1])
    return `rejected otherwise: ${String(error).slice(0, 300)}`
  }
}

const bundlerRefusal = async (op: UserOperationV07): Promise<BundlerRpcError> => {
  const error = await client.send(op).then(
    () => undefined,
    (e: unknown) => e
  )
  expect(error).toBeInstanceOf(BundlerRpcError)
  return error as BundlerRpcError
}

const accepts = async (account: Address, op: UserOperationV07) => {
  const paymasterDeposit = await client.public.readContract({
    address: aa.chain.paymaster,
    abi: verifyingPaymasterAbi,
    functionName: "getDeposit"
  })
  const before = await balanceOf(yesToken, account)
  const receipt = await client.waitForReceipt(await client.send(op))
  expect(receipt.success).toBe(true)
  expect(receipt.paymaster?.toLowerCase()).toBe(aa.chain.paymaster)
  expect(await client.isDeployed(account)).toBe(true)
  expect(await balanceOf(yesToken, account)).toBeGreaterThan(before)
  // The paymaster paid the gas: the account never held ETH.
  expect(await client.public.getBalance({ address: account })).toBe(0n)
  expect(await client.public.readContract({ address: aa.chain.paymaster, abi: verifyingPaymasterAbi, functionName: "getDeposit" })).toBe(
    paymasterDeposit - BigInt(receipt.actualGasCost)
  )
}

describe("account abstraction on the devnet (EntryPoint v0.7, alto)", () => {
  const ecdsa = ecdsaSigner(generatePrivateKey())

  it("an undeployed ECDSA-owned account deploys, approves and buys YES in one sponsored user operation; the TS paymaster hash is the contract's", async () => {
    const { account, op, window } = await sponsoredBuy(ecdsa, 25n * USDC)
    expect(await client.isDeployed(account)).toBe(false)
    expect(op.factory).toBe(aa.chain.smartAccountFactory)
    const onChain = await client.public.readContract({
      address: aa.chain.paymaster,
      abi: verifyingPaymasterAbi,
      functionName: "getHash",
      args: [packUserOperation(op), window.validUntil, window.validAfter]
    })
    expect(paymasterHash(op, aa.chain.chainId, aa.chain.paymaster, window)).toBe(onChain)
    await accepts(account, op)
    // The account knows its owner, and the counterfactual address is the deployed one.
    const owner = await client.public.readContract({ address: account, abi: smartAccountAbi, functionName: "owner" })
    expect(decodeOwner(owner)).toEqual(ecdsa.owner)
    expect(await client.accountAddress(ecdsa.owner)).toBe(account)
    // Only the EntryPoint executes: anyone else calling execute is refused.
    const direct = client.public.simulateContract({
      address: account,
      abi: smartAccountAbi,
      functionName: "execute",
      args: [aa.manifest.devnet.addresses.testUsdc, 0n, "0x"],
      account: aa.client.address(ADMIN)
    })
    await expect(direct).rejects.toThrow(/OnlyEntryPoint/)
    expect(decodeAccountCalls(op.callData)).toEqual(
      approveAndBuyYes(account, 25n * USDC).map((c) => ({ ...c, target: c.target.toLowerCase(), data: c.data.toLowerCase() }))
    )
  }, 120_000)

  it("an undeployed passkey-owned account (WebAuthn P-256) does the same; ERC-1271 accepts its assertions and nothing else", async () => {
    const passkey = softwarePasskey()
    const { account, op } = await sponsoredBuy(passkey, 40n * USDC)
    expect(await client.isDeployed(account)).toBe(false)
    await accepts(account, op)
    expect(await client.public.readContract({ address: account, abi: smartAccountAbi, functionName: "owner" })).toBe(
      encodeOwner(passkey.owner)
    )

    const hash = `0x${"ab".repeat(32)}` as Hex
    const isValid = (signature: Hex) =>
      client.public.readContract({ address: account, abi: smartAccountAbi, functionName: "isValidSignature", args: [hash, signature] })
    expect(await isValid(passkey.assert(hash).encoded)).toBe("0x1626ba7e")
    expect(await isValid(passkey.assert(`0x${"ac".repeat(32)}`).encoded)).toBe("0xffffffff") // another challenge
    expect(await isValid(softwarePasskey().assert(hash).encoded)).toBe("0xffffffff") // another key
    expect(await isValid(passkey.assert(hash, { userPresent: false }).encoded)).toBe("0xffffffff") // user-present flag cleared
    expect(await isValid("0x1234")).toBe("0xffffffff") // not an encoding: a failed check, not a revert
    // The same signature's high-s twin (n - s) is refused: one signature, one encoding.
    const low = decodeWebAuthnSignature(passkey.assert(hash).encoded)!
    const highS = encodeAbiParameters(
      [{ type: "bytes" }, { type: "string" }, { type: "uint256" }, { type: "uint256" }, { type: "uint256" }, { type: "uint256" }],
      [low.authenticatorData, low.clientDataJSON, BigInt(low.challengeIndex), BigInt(low.typeIndex), low.r, P256_N - low.s]
    )
    expect(await isValid(highS)).toBe("0xffffffff")
  }, 120_000)

  it("refuses a tampered user-operation signature, a tampered paymaster signature, an operation changed after sponsoring, an expired sponsorship and a paused paymaster: the bundler, and the EntryPoint on chain", async () => {
    // The ECDSA account is deployed now; a well-formed operation is the control.
    const { op: good } = await sponsoredBuy(ecdsa, 5n * USDC)
    expect(await entryPointVerdict(good)).toBe("accepted")

    const sig = good.signature
    const tamperedUser: UserOperationV07 = {
      ...good,
      signature: `${sig.slice(0, 10)}${sig[10] === "0" ? "1" : "0"}${sig.slice(11)}` as Hex
    }
    expect(await entryPointVerdict(tamperedUser)).toBe("AA24 signature error")
    expect((await bundlerRefusal(tamperedUser)).message).toMatch(/AA24|signature/i)

    // The user re-signs what it altered (the paymaster data is inside the userOpHash): only the sponsorship is wrong.
    const data = good.paymasterData!
    const tamperedPaymaster = await client.sign(
      { ...good, paymasterData: `${data.slice(0, -20)}${data.at(-20) === "0" ? "1" : "0"}${data.slice(-19)}` as Hex },
      ecdsa
    )
    expect(await entryPointVerdict(tamperedPaymaster)).toBe("AA34 signature error")
    expect((await bundlerRefusal(tamperedPaymaster)).message).toMatch(/AA34|signature/i)
    const moreGas = await client.sign({ ...good, callGasLimit: good.callGasLimit * 2n }, ecdsa)
    expect(await entryPointVerdict(moreGas)).toBe("AA34 signature error")
    expect((await bundlerRefusal(moreGas)).message).toMatch(/AA34|signature/i)

    const now = await chainNow()
    const { op: expired } = await sponsoredBuy(ecdsa, 5n * USDC, { validUntil: now - 60, validAfter: now - 600 })
    expect(await entryPointVerdict(expired)).toBe("AA32 paymaster expired or not due")
    expect((await bundlerRefusal(expired)).message).toMatch(/AA32|expire/i)

    // A paused paymaster refuses (reverts) in validation.
    const pm = aa.manifest.paymasterAccount
    await aa.client.send(pm, "VerifyingPaymaster", aa.chain.paymaster, "pause")
    expect(await entryPointVerdict(good)).toBe("AA33 reverted")
    expect((await bundlerRefusal(good)).message).toMatch(/AA33|PaymasterPaused|reverted/i)
    await aa.client.send(pm, "VerifyingPaymaster", aa.chain.paymaster, "unpause")

    // Nothing of the refused operations landed: the control still goes through, with the nonce they would have used.
    await accepts(await client.accountAddress(ecdsa.owner), good)
  }, 120_000)
})
