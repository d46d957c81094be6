/**
 * The paymaster's sponsorship policy (pure; issue 18). A user operation is sponsored only when:
 * 1. its sender is the session's smart account (and an initCode, if any, deploys exactly that
 *    account: for an ECDSA owner the SimpleAccountFactory's createAccount(owner address, 0), for
 *    a passkey owner the project factory's createAccount(owner key bytes, 0));
 * 2. its callData is the account's execute / executeBatch (either account's batch form,
 *    schema/protocol/aa.ts `decodeAccountCalls`), and every call it makes carries no
 *    value and targets the protocol with an allowed selector:
 *    - Router: buyYes, sellYes, buyNo, sellNo, trade, with the sender as recipient;
 *    - Diamond: splitPosition, mergePositions, redeem;
 *    - Exchange: placeOrder, cancelOrder;
 *    - the collateral and the markets' outcome tokens: approve, to Permit2, the Router, the
 *      Exchange or the Diamond (split pulls collateral through the Diamond) only;
 * 3. its gas limits and fee are under the configured caps.
 * The daily budget (4.) is charged afterwards, atomically, in the database (`sponsor.ts`).
 */
import { decodeFunctionData, parseAbi, type Address, type Hex } from "viem"
import { decodeAccountCalls, type AccountCall } from "../../../schema/protocol/aa.js"
import type { ErrorDetail } from "../../../schema/errors.js"
import type { ProtocolContracts, SponsorCaps } from "./config.js"

/** A v0.7 user operation as the sponsor reads it (the RPC form, quantities parsed). */
export interface UserOperation {
  readonly sender: Address
  readonly nonce: bigint
  readonly factory?: Address | undefined
  readonly factoryData?: Hex | undefined
  readonly callData: Hex
  readonly callGasLimit: bigint
  readonly verificationGasLimit: bigint
  readonly preVerificationGas: bigint
  readonly maxFeePerGas: bigint
  readonly maxPriorityFeePerGas: bigint
}

const PASSKEY_FACTORY_ABI = parseAbi(["function createAccount(bytes owner, uint256 salt) returns (address)"])
const SIMPLE_FACTORY_ABI = parseAbi(["function createAccount(address owner, uint256 salt) returns (address)"])

/** The RPC form (hex quantities, any case) -> the sponsor's form (bigints, lowercase). */
export const toUserOperation = (op: {
  readonly sender: string
  readonly nonce: string
  readonly factory?: string | null | undefined
  readonly factoryData?: string | null | undefined
  readonly callData: string
  readonly callGasLimit: string
  readonly verificationGasLimit: string
  readonly preVerificationGas: string
  readonly maxFeePerGas: string
  readonly maxPriorityFeePerGas: string
}): UserOperation => ({
  sender: op.sender.toLowerCase() as Address,
  nonce: BigInt(op.nonce),
  factory: op.factory === null || op.factory === undefined ? undefined : (op.factory.toLowerCase() as Address),
  factoryData: op.factoryData === null || op.factoryData === undefined ? undefined : (op.factoryData.toLowerCase() as Hex),
  callData: op.callData.toLowerCase() as Hex,
  callGasLimit: BigInt(op.callGasLimit),
  verificationGasLimit: BigInt(op.verificationGasLimit),
  preVerificationGas: BigInt(op.preVerificationGas),
  maxFeePerGas: BigInt(op.maxFeePerGas),
  maxPriorityFeePerGas: BigInt(op.maxPriorityFeePerGas)
})

export { decodeAccountCalls }

export const ROUTER_ABI = parseAbi([
  "function buyYes(uint256 marketId, uint256 amountIn, uint256 minOut, address recipient, uint256 maxFills, uint256 deadline)",
  "function sellYes(uint256 marketId, uint256 amountIn, uint256 minOut, address recipient, uint256 maxFills, uint256 deadline)",
  "function buyNo(uint256 marketId, uint256 amountIn, uint256 minOut, address recipient, uint256 maxFills, uint256 deadline)",
  "function sellNo(uint256 marketId, uint256 amountIn, uint256 minOut, address recipient, uint256 maxFills, uint256 deadline)",
  "function trade(uint8 tradeType, uint256 marketId, uint256 amountIn, uint256 minOut, address recipient, uint256 maxFills, uint256 deadline, address referrer)"
])
const DIAMOND_ABI = parseAbi([
  "function splitPosition(uint256 marketId, uint256 amount)",
  "function mergePositions(uint256 marketId, uint256 amount)",
  "function redeem(uint256 marketId)"
])
const EXCHANGE_ABI = parseAbi([
  "function placeOrder(uint256 marketId, uint8 side, uint256 price, uint256 amount, bytes32 builder)",
  "function cancelOrder(bytes32 orderId)"
])
const TOKEN_ABI = parseAbi(["function approve(address spender, uint256 amount) returns (bool)"])

export type Call = AccountCall

/** Approve calls' targets that are not protocol contracts: the caller tells which are outcome tokens. */
export const tokenCandidates = (calls: ReadonlyArray<Call>, protocol: ProtocolContracts): ReadonlyArray<string> => {
  const known = new Set(Object.values(protocol).map((a) => a.toLowerCase()))
  return [...new Set(calls.map((c) => c.target.toLowerCase()).filter((t) => !known.has(t)))]
}

export interface PolicyContext {
  /** The session's smart account and its owner encoding (lowercase). */
  readonly account: string
  readonly owner: string
  /** The passkey accounts' factory (64-byte owners). */
  readonly accountFactory: Address
  /** The ECDSA accounts' factory, SimpleAccountFactory v0.7 (20-byte owners). */
  readonly ecdsaAccountFactory: Address
  readonly protocol: ProtocolContracts
  /** The markets' outcome tokens among the calls' targets (lowercase). */
  readonly outcomeTokens: ReadonlySet<string>
  readonly caps: SponsorCaps
}

export type Refusal =
  | { readonly _tag: "NotYourAccount"; readonly message: string }
  | { readonly _tag: "NotSponsored"; readonly message: string; readonly details: ReadonlyArray<ErrorDetail> }
  | { readonly _tag: "OverCaps"; readonly message: string; readonly details: ReadonlyArray<ErrorDetail> }

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()

/** Why one call is not sponsored, or undefined when it is. */
const callProblem = (call: Call, context: PolicyContext): string | undefined => {
  const { protocol } = context
  if (call.value !== 0n) return "carries value: sponsored calls send no ETH"
  const spenders = [protocol.permit2, protocol.router, protocol.exchange, protocol.diamond]
  const decode = <const A extends Parameters<typeof decodeFunctionData>[0]["abi"]>(abi: A) => {
    try {
      return decodeFunctionData({ abi, data: call.data })
    } catch {
      return undefined
    }
  }
  if (same(call.target, protocol.router)) {
    const decoded = decode(ROUTER_ABI)
    if (decoded === undefined) return "calls the Router outside buyYes, sellYes, buyNo, sellNo, trade"
    const recipient = decoded.functionName === "trade" ? decoded.args[4] : decoded.args[3]
    if (!same(recipient, context.account))
      return `Router ${decoded.functionName} pays ${recipient.toLowerCase()}: the recipient must be the sender`
    return undefined
  }
  if (same(call.target, protocol.diamond)) {
    return decode(DIAMOND_ABI) === undefined ? "calls the Diamond outside splitPosition, mergePositions, redeem" : undefined
  }
  if (same(call.target, protocol.exchange)) {
    return decode(EXCHANGE_ABI) === undefined ? "calls the Exchange outside placeOrder, cancelOrder" : undefined
  }
  if (same(call.target, protocol.usdc) || context.outcomeTokens.has(call.target.toLowerCase())) {
    const decoded = decode(TOKEN_ABI)
    if (decoded === undefined) return "calls a token outside approve"
    if (!spenders.some((s) => same(s, decoded.args[0])))
      return `approves ${decoded.args[0].toLowerCase()}: only Permit2, the Router, the Exchange and the Diamond`
    return undefined
  }
  return `targets ${call.target.toLowerCase()}, which is not a protocol contract`
}

/**
 * Whether `op`'s initCode deploys the session's own account: the factory for the owner's kind
 * (20-byte owner: SimpleAccountFactory; otherwise the passkey factory) called with that owner
 * and salt 0. The sender check alone would not do: another owner's initCode for the same factory
 * fails in the EntryPoint, but only after the bundler spent simulation on it.
 */
const deploysOwnAccount = (op: UserOperation, context: PolicyContext): boolean => {
  if (op.factory === undefined || op.factoryData === undefined) return false
  const ecdsa = context.owner.length === 42
  if (!same(op.factory, ecdsa ? context.ecdsaAccountFactory : context.accountFactory)) return false
  try {
    const decoded = ecdsa
      ? decodeFunctionData({ abi: SIMPLE_FACTORY_ABI, data: op.factoryData })
      : decodeFunctionData({ abi: PASSKEY_FACTORY_ABI, data: op.factoryData })
    return same(decoded.args[0], context.owner) && decoded.args[1] === 0n
  } catch {
    return false
  }
}

/** The policy's verdict on `op`: undefined (sponsor it, budget permitting) or the refusal. */
export const checkPolicy = (op: UserOperation, context: PolicyContext): Refusal | undefined => {
  if (!same(op.sender, context.account)) {
    return {
      _tag: "NotYourAccount",
      message: `the operation's sender ${op.sender.toLowerCase()} is not the session's smart account ${context.account}`
    }
  }
  const details: Array<ErrorDetail> = []
  if (op.factory !== undefined || (op.factoryData !== undefined && op.factoryData !== "0x")) {
    if (!deploysOwnAccount(op, context))
      details.push({
        path: "factoryData",
        message: "an initCode must be the owner's factory's createAccount(session owner, 0) (SimpleAccountFactory for an EOA owner)"
      })
  }
  const calls = decodeAccountCalls(op.callData)
  if (calls === undefined) details.push({ path: "callData", message: "not the account's execute or executeBatch" })
  else if (calls.length === 0) details.push({ path: "callData", message: "executeBatch of no calls" })
  else
    calls.forEach((call, i) => {
      const problem = callProblem(call, context)
      if (problem !== undefined) details.push({ path: `callData.calls.${i}`, message: problem })
    })
  if (details.length > 0)
    return {
      _tag: "NotSponsored",
      message: "the paymaster sponsors only the protocol's trades, splits, merges, redemptions, orders and approvals",
      details
    }

  const { caps } = context
  const over: Array<ErrorDetail> = []
  const cap = (path: string, value: bigint, limit: bigint) => {
    if (value > limit) over.push({ path, message: `${value} is over the cap ${limit}` })
  }
  cap("callGasLimit", op.callGasLimit, caps.maxCallGas)
  cap("verificationGasLimit", op.verificationGasLimit, caps.maxVerificationGas)
  cap("preVerificationGas", op.preVerificationGas, caps.maxPreVerificationGas)
  cap("maxFeePerGas", op.maxFeePerGas, caps.maxFeePerGas)
  cap("maxPriorityFeePerGas", op.maxPriorityFeePerGas, op.maxFeePerGas)
  if (over.length > 0) return { _tag: "OverCaps", message: "gas limits over the sponsorship caps", details: over }
  return undefined
}

/** The most the EntryPoint can charge the paymaster for `op` (what the daily budget counts). */
export const maxCostWei = (op: UserOperation, caps: SponsorCaps): bigint =>
  (op.callGasLimit + op.verificationGasLimit + op.preVerificationGas + caps.paymasterVerificationGas + caps.paymasterPostOpGas) *
  op.maxFeePerGas
