/** Revert data -> SLIPPAGE_EXCEEDED / INSUFFICIENT_BALANCE / MARKET_PAUSED, bare and wrapped as bundlers report them. */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { encodeAbiParameters, encodeErrorResult, parseAbi } from "viem"
import { decodeBundlerError, decodeRevert, refineRevert } from "../../../http/backend/aa/revert-codes.js"

const ABI = parseAbi([
  "error InsufficientOutput(uint256 actual, uint256 minimum)",
  "error Paused()",
  "error ExchangePaused()",
  "error MarketNotTradable(uint256 marketId)",
  "error UnknownMarket(uint256 marketId)",
  "error Error(string reason)",
  "error ExactInUnfilled()",
  "error FailedOpWithRevert(uint256 opIndex, string reason, bytes inner)"
])

const slippage = encodeErrorResult({ abi: ABI, errorName: "InsufficientOutput", args: [90n, 100n] })
const wrap = (inner: `0x${string}`) => encodeErrorResult({ abi: ABI, errorName: "FailedOpWithRevert", args: [0n, "AA23 reverted", inner] })

describe("revert codes", () => {
  it("maps the protocol's reverts, bare", () => {
    expect(decodeRevert(slippage)).toEqual({ code: "SLIPPAGE_EXCEEDED", error: "InsufficientOutput(90, 100)", data: slippage })
    expect(decodeRevert(encodeErrorResult({ abi: ABI, errorName: "Error", args: ["ERC20: balance"] }))?.code).toBe("INSUFFICIENT_BALANCE")
    expect(decodeRevert(encodeErrorResult({ abi: ABI, errorName: "Error", args: ["ERC20: burn"] }))?.code).toBe("INSUFFICIENT_BALANCE")
    expect(decodeRevert(encodeErrorResult({ abi: ABI, errorName: "Paused" }))?.code).toBe("MARKET_PAUSED")
    expect(decodeRevert(encodeErrorResult({ abi: ABI, errorName: "ExchangePaused" }))?.code).toBe("MARKET_PAUSED")
    expect(decodeRevert(encodeErrorResult({ abi: ABI, errorName: "MarketNotTradable", args: [7n] }))).toMatchObject({
      code: "MARKET_PAUSED",
      error: "MarketNotTradable(7)"
    })
  })

  it("leaves other reverts alone", () => {
    expect(decodeRevert(encodeErrorResult({ abi: ABI, errorName: "Error", args: ["zero amount"] }))).toBeUndefined()
    expect(decodeRevert(encodeErrorResult({ abi: ABI, errorName: "ExactInUnfilled" }))).toBeUndefined()
    expect(decodeRevert("0x")).toBeUndefined()
    expect(decodeRevert("0xdeadbeefdeadbeef")).toBeUndefined()
  })

  it("finds the revert inside the EntryPoint's wrapper, the account's bytes and the bundler's message", () => {
    expect(decodeRevert(wrap(slippage))).toEqual({ code: "SLIPPAGE_EXCEEDED", error: "InsufficientOutput(90, 100)", data: slippage })
    const inAccountBytes = encodeAbiParameters(
      [{ type: "bytes" }],
      [encodeErrorResult({ abi: ABI, errorName: "Error", args: ["ERC20: balance"] })]
    )
    expect(decodeRevert(inAccountBytes)?.code).toBe("INSUFFICIENT_BALANCE")
    expect(decodeBundlerError({ code: -32521, message: `UserOperation reverted during simulation with reason: ${slippage}` })?.code).toBe(
      "SLIPPAGE_EXCEEDED"
    )
    expect(
      decodeBundlerError({
        code: -32521,
        message: "execution reverted",
        data: { revertData: wrap(encodeErrorResult({ abi: ABI, errorName: "Paused" })) }
      })?.code
    ).toBe("MARKET_PAUSED")
    expect(decodeBundlerError({ code: -32602, message: "invalid params: 0x1234" })).toBeUndefined()
  })

  it("maps UnknownMarket to MARKET_NOT_FOUND, and MarketNotTradable of a market the chain does not know (never of a known one, nor when the chain cannot say)", async () => {
    expect(decodeRevert(encodeErrorResult({ abi: ABI, errorName: "UnknownMarket", args: [5n] }))).toMatchObject({
      code: "MARKET_NOT_FOUND",
      error: "UnknownMarket(5)"
    })
    const notTradable = decodeRevert(wrap(encodeErrorResult({ abi: ABI, errorName: "MarketNotTradable", args: [7n] })))!
    expect(notTradable).toMatchObject({ code: "MARKET_PAUSED", marketId: 7n })
    const asked: Array<bigint> = []
    const known = (answer: boolean) => (id: bigint) => Effect.sync(() => (asked.push(id), answer))
    expect((await Effect.runPromise(refineRevert(notTradable, known(false)))).code).toBe("MARKET_NOT_FOUND")
    expect((await Effect.runPromise(refineRevert(notTradable, known(true)))).code).toBe("MARKET_PAUSED")
    expect(asked).toEqual([7n, 7n])
    expect((await Effect.runPromise(refineRevert(notTradable, () => Effect.fail("rpc down")))).code).toBe("MARKET_PAUSED")
    expect(await Effect.runPromise(refineRevert(decodeRevert(slippage)!, known(false)))).toMatchObject({ code: "SLIPPAGE_EXCEEDED" })
  })
})
