/** The sponsorship policy on decoded calldata (pure): what is sponsored, and every way out of it. */
import { describe, expect, it } from "vitest"
import { encodeFunctionData, parseAbi, type Address, type Hex } from "viem"
import { accountFactoryData, encodeAccountCalls, encodeSimpleAccountBatch, simpleAccountFactoryData } from "../../../schema/protocol/aa.js"
import { DEFAULT_SPONSOR_CAPS } from "../../../http/backend/aa/config.js"
import { checkPolicy, maxCostWei, ROUTER_ABI, type PolicyContext, type UserOperation } from "../../../http/backend/aa/sponsor-policy.js"

const ACCOUNT: Address = "0x1111111111111111111111111111111111111111"
const OWNER: Address = "0x2222222222222222222222222222222222222222"
const FACTORY: Address = "0x3333333333333333333333333333333333333333"
const YES: Address = "0x4444444444444444444444444444444444444444"
const STRANGER: Address = "0x5555555555555555555555555555555555555555"
const SIMPLE_FACTORY: Address = "0x6666666666666666666666666666666666666666"
/** A passkey owner: abi.encode(x, y). */
const KEY_OWNER: Hex = `0x${"07".repeat(32)}${"08".repeat(32)}`
const protocol = {
  router: "0x00000000000000000000000000000000000000b1",
  diamond: "0x00000000000000000000000000000000000000b2",
  exchange: "0x00000000000000000000000000000000000000b3",
  usdc: "0x00000000000000000000000000000000000000b4",
  permit2: "0x000000000022d473030f116ddee9f6b43ac78ba3"
} as const

const context: PolicyContext = {
  account: ACCOUNT,
  owner: OWNER,
  accountFactory: FACTORY,
  ecdsaAccountFactory: SIMPLE_FACTORY,
  protocol,
  outcomeTokens: new Set([YES]),
  caps: DEFAULT_SPONSOR_CAPS
}

const TOKEN = parseAbi([
  "function approve(address spender, uint256 amount) returns (bool)",
  "function transfer(address to, uint256 amount) returns (bool)"
])
const DIAMOND = parseAbi([
  "function splitPosition(uint256 marketId, uint256 amount)",
  "function mergePositions(uint256 marketId, uint256 amount)",
  "function redeem(uint256 marketId)",
  "function grantRole(bytes32 role, address account)"
])
const EXCHANGE = parseAbi([
  "function placeOrder(uint256 marketId, uint8 side, uint256 price, uint256 amount, bytes32 builder)",
  "function cancelOrder(bytes32 orderId)",
  "function fillMarketOrder(uint256 marketId, uint8 side, uint256 limitPrice, uint256 amountIn, address recipient, uint256 maxFills)"
])

const approve = (token: Address, spender: Address) => ({
  target: token,
  value: 0n,
  data: encodeFunctionData({ abi: TOKEN, functionName: "approve", args: [spender, 10n ** 30n] })
})
const buyYes = (recipient: Address) => ({
  target: protocol.router as Address,
  value: 0n,
  data: encodeFunctionData({ abi: ROUTER_ABI, functionName: "buyYes", args: [1n, 5_000_000n, 1n, recipient, 10n, 2n ** 40n] })
})
const call = (target: Address, data: Hex, value = 0n) => ({ target, value, data })

const op = (
  calls: ReadonlyArray<{ target: Address; value: bigint; data: Hex }>,
  overrides: Partial<UserOperation> = {}
): UserOperation => ({
  sender: ACCOUNT,
  nonce: 0n,
  callData: encodeAccountCalls(calls),
  callGasLimit: 500_000n,
  verificationGasLimit: 500_000n,
  preVerificationGas: 100_000n,
  maxFeePerGas: 2_000_000_000n,
  maxPriorityFeePerGas: 1_000_000_000n,
  ...overrides
})

const tagOf = (o: UserOperation) => checkPolicy(o, context)?._tag

describe("sponsorship policy", () => {
  it("sponsors the protocol's actions of the session's own account", () => {
    expect(checkPolicy(op([approve(protocol.usdc, protocol.router), buyYes(ACCOUNT)]), context)).toBeUndefined()
    expect(
      tagOf(
        op([approve(protocol.usdc, protocol.permit2), approve(protocol.usdc, protocol.exchange), approve(protocol.usdc, protocol.diamond)])
      )
    ).toBeUndefined()
    expect(tagOf(op([approve(YES, protocol.exchange)]))).toBeUndefined()
    const router = (name: "sellYes" | "buyNo" | "sellNo") =>
      call(protocol.router, encodeFunctionData({ abi: ROUTER_ABI, functionName: name, args: [1n, 1n, 0n, ACCOUNT, 1n, 1n] }))
    expect(tagOf(op([router("sellYes"), router("buyNo"), router("sellNo")]))).toBeUndefined()
    expect(
      tagOf(
        op([
          call(
            protocol.router,
            encodeFunctionData({ abi: ROUTER_ABI, functionName: "trade", args: [0, 1n, 1n, 0n, ACCOUNT, 1n, 1n, STRANGER] })
          )
        ])
      )
    ).toBeUndefined()
    expect(
      tagOf(
        op([
          call(protocol.diamond, encodeFunctionData({ abi: DIAMOND, functionName: "splitPosition", args: [1n, 5n] })),
          call(protocol.diamond, encodeFunctionData({ abi: DIAMOND, functionName: "mergePositions", args: [1n, 5n] })),
          call(protocol.diamond, encodeFunctionData({ abi: DIAMOND, functionName: "redeem", args: [1n] }))
        ])
      )
    ).toBeUndefined()
    expect(
      tagOf(
        op([
          call(
            protocol.exchange,
            encodeFunctionData({ abi: EXCHANGE, functionName: "placeOrder", args: [1n, 0, 500_000n, 10n ** 6n, `0x${"00".repeat(32)}`] })
          ),
          call(protocol.exchange, encodeFunctionData({ abi: EXCHANGE, functionName: "cancelOrder", args: [`0x${"11".repeat(32)}`] }))
        ])
      )
    ).toBeUndefined()
  })

  it("refuses another sender", () => {
    expect(tagOf(op([buyYes(STRANGER)], { sender: STRANGER }))).toBe("NotYourAccount")
  })

  it("refuses non-protocol targets, other selectors, other spenders, other recipients and value", () => {
    expect(tagOf(op([call(STRANGER, "0x")]))).toBe("NotSponsored")
    expect(tagOf(op([buyYes(STRANGER)]))).toBe("NotSponsored")
    expect(tagOf(op([approve(protocol.usdc, STRANGER)]))).toBe("NotSponsored")
    expect(tagOf(op([approve(STRANGER, protocol.router)]))).toBe("NotSponsored") // not an outcome token
    expect(tagOf(op([call(protocol.usdc, encodeFunctionData({ abi: TOKEN, functionName: "transfer", args: [STRANGER, 1n] }))]))).toBe(
      "NotSponsored"
    )
    expect(
      tagOf(
        op([
          call(protocol.diamond, encodeFunctionData({ abi: DIAMOND, functionName: "grantRole", args: [`0x${"00".repeat(32)}`, STRANGER] }))
        ])
      )
    ).toBe("NotSponsored")
    expect(
      tagOf(
        op([
          call(
            protocol.exchange,
            encodeFunctionData({ abi: EXCHANGE, functionName: "fillMarketOrder", args: [1n, 0, 1n, 1n, ACCOUNT, 1n] })
          )
        ])
      )
    ).toBe("NotSponsored")
    expect(tagOf(op([{ ...approve(protocol.usdc, protocol.router), value: 1n }]))).toBe("NotSponsored")
    expect(tagOf({ ...op([buyYes(ACCOUNT)]), callData: "0xdeadbeef" })).toBe("NotSponsored")
    expect(tagOf({ ...op([buyYes(ACCOUNT)]), callData: `${encodeAccountCalls([buyYes(ACCOUNT)])}00` })).toBe("NotSponsored") // trailing bytes
    // One bad call spoils the batch, and the refusal says which.
    const refusal = checkPolicy(op([approve(protocol.usdc, protocol.router), call(STRANGER, "0x")]), context)
    expect(refusal).toMatchObject({ _tag: "NotSponsored", details: [{ path: "callData.calls.1" }] })
  })

  it("accepts an initCode only when it deploys the session's own account", () => {
    // An EOA owner's account is SimpleAccountFactory's createAccount(owner, 0).
    const own = simpleAccountFactoryData(SIMPLE_FACTORY, OWNER)
    expect(tagOf(op([buyYes(ACCOUNT)], own))).toBeUndefined()
    expect(tagOf(op([buyYes(ACCOUNT)], simpleAccountFactoryData(SIMPLE_FACTORY, STRANGER)))).toBe("NotSponsored")
    expect(tagOf(op([buyYes(ACCOUNT)], simpleAccountFactoryData(SIMPLE_FACTORY, OWNER, 1n)))).toBe("NotSponsored")
    expect(tagOf(op([buyYes(ACCOUNT)], { ...own, factory: STRANGER }))).toBe("NotSponsored")
    // The passkey factory's call for the same EOA is not the EOA's account.
    expect(tagOf(op([buyYes(ACCOUNT)], accountFactoryData(FACTORY, { kind: "ecdsa", address: OWNER })))).toBe("NotSponsored")
    // A passkey owner's account is the project factory's createAccount(key bytes, 0), and only that.
    const keyContext = { ...context, owner: KEY_OWNER }
    const key = { kind: "p256", x: BigInt(`0x${"07".repeat(32)}`), y: BigInt(`0x${"08".repeat(32)}`) } as const
    expect(checkPolicy(op([buyYes(ACCOUNT)], accountFactoryData(FACTORY, key)), keyContext)).toBeUndefined()
    expect(checkPolicy(op([buyYes(ACCOUNT)], accountFactoryData(SIMPLE_FACTORY, key)), keyContext)?._tag).toBe("NotSponsored")
    expect(checkPolicy(op([buyYes(ACCOUNT)], simpleAccountFactoryData(SIMPLE_FACTORY, OWNER)), keyContext)?._tag).toBe("NotSponsored")
  })

  it("reads SimpleAccount's executeBatch(dest[], value[], func[]) like the project account's batch", () => {
    const batch = (calls: Parameters<typeof encodeSimpleAccountBatch>[0]) => ({
      ...op([buyYes(ACCOUNT)]),
      callData: encodeSimpleAccountBatch(calls)
    })
    expect(tagOf(batch([approve(protocol.usdc, protocol.router), buyYes(ACCOUNT)]))).toBeUndefined()
    // Every call is checked: a stranger's target, or value, spoils it as in the other form.
    expect(checkPolicy(batch([approve(protocol.usdc, protocol.router), call(STRANGER, "0x")]), context)).toMatchObject({
      _tag: "NotSponsored",
      details: [{ path: "callData.calls.1" }]
    })
    expect(tagOf(batch([{ ...buyYes(ACCOUNT), value: 1n }, buyYes(ACCOUNT)]))).toBe("NotSponsored")
    expect(
      tagOf({ ...batch([buyYes(ACCOUNT), buyYes(ACCOUNT)]), callData: `${encodeSimpleAccountBatch([buyYes(ACCOUNT), buyYes(ACCOUNT)])}00` })
    ).toBe("NotSponsored")
    // Empty values (every call sends 0) is SimpleAccount's other form; mismatched lengths revert on chain.
    const twoCalls = [approve(protocol.usdc, protocol.router), buyYes(ACCOUNT)]
    const encode = (values: ReadonlyArray<bigint>) =>
      encodeFunctionData({
        abi: parseAbi(["function executeBatch(address[] dest, uint256[] value, bytes[] func)"]),
        functionName: "executeBatch",
        args: [twoCalls.map((c) => c.target), values, twoCalls.map((c) => c.data)]
      })
    expect(tagOf({ ...op([buyYes(ACCOUNT)]), callData: encode([]) })).toBeUndefined()
    expect(tagOf({ ...op([buyYes(ACCOUNT)]), callData: encode([0n]) })).toBe("NotSponsored")
  })

  it("refuses gas over each cap, and counts the maximum cost", () => {
    const caps = DEFAULT_SPONSOR_CAPS
    expect(tagOf(op([buyYes(ACCOUNT)], { callGasLimit: caps.maxCallGas + 1n }))).toBe("OverCaps")
    expect(tagOf(op([buyYes(ACCOUNT)], { verificationGasLimit: caps.maxVerificationGas + 1n }))).toBe("OverCaps")
    expect(tagOf(op([buyYes(ACCOUNT)], { preVerificationGas: caps.maxPreVerificationGas + 1n }))).toBe("OverCaps")
    expect(tagOf(op([buyYes(ACCOUNT)], { maxFeePerGas: caps.maxFeePerGas + 1n, maxPriorityFeePerGas: 1n }))).toBe("OverCaps")
    expect(tagOf(op([buyYes(ACCOUNT)], { maxPriorityFeePerGas: 3_000_000_000n }))).toBe("OverCaps")
    expect(
      tagOf(
        op([buyYes(ACCOUNT)], {
          callGasLimit: caps.maxCallGas,
          verificationGasLimit: caps.maxVerificationGas,
          preVerificationGas: caps.maxPreVerificationGas,
          maxFeePerGas: caps.maxFeePerGas,
          maxPriorityFeePerGas: 1n
        })
      )
    ).toBeUndefined()
    expect(maxCostWei(op([buyYes(ACCOUNT)]), caps)).toBe(
      (500_000n + 500_000n + 100_000n + caps.paymasterVerificationGas + caps.paymasterPostOpGas) * 2_000_000_000n
    )
  })
})
