/**
 * What a user operation's execution would do, asked of the chain before the paymaster signs
 * (issue 28 item 4: an operation sent with its own gas limits never passes the bundler's
 * estimation, so without this a reverting operation would be sponsored and mined with
 * success: false, the paymaster paying).
 *
 * One `eth_simulateV1` of the latest state, two calls in one simulated next block:
 * 1. with an initCode: the factory's call from the EntryPoint's SenderCreator (as the EntryPoint
 *    deploys it), so a first operation is simulated against its own new account;
 * 2. the account's callData from the EntryPoint (the account only obeys the EntryPoint) with
 *    exactly `callGasLimit` of gas for the account's frame (the EntryPoint's own call gives it
 *    that much; the transaction's intrinsic gas is added on top), so running out of gas counts.
 * Validation (signatures, prefund) is not simulated: the signature does not exist yet, and a
 * failed validation is never mined, so it costs the paymaster nothing.
 */
import { Effect } from "effect"
import {
  BaseError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  createPublicClient,
  getContractAddress,
  hexToBytes,
  http,
  parseAbi,
  type Address,
  type Hex
} from "viem"
import { IndexerUnavailable } from "../../../schema/errors.js"
import type { UserOperation } from "./sponsor-policy.js"

export type Simulated =
  | { readonly _tag: "Succeeds" }
  /** The factory's call reverted: `data` its revert data. */
  | { readonly _tag: "DeployReverts"; readonly data: Hex; readonly reason: string }
  /** The account's execution reverted (or ran out of gas): `data` its revert data. */
  | { readonly _tag: "Reverts"; readonly data: Hex; readonly reason: string }

interface SimulatedCall {
  readonly status: Hex
  readonly returnData: Hex
  readonly error?: { readonly code?: number; readonly message?: string; readonly data?: Hex }
}

/** A transaction's intrinsic gas for `data` (EIP-2028), or its EIP-7623 floor when higher. */
export const intrinsicGas = (data: Hex): bigint => {
  const bytes = hexToBytes(data)
  const zeros = BigInt(bytes.filter((b) => b === 0).length)
  const nonZeros = BigInt(bytes.length) - zeros
  const standard = 21_000n + 16n * nonZeros + 4n * zeros
  const floor = 21_000n + 10n * (zeros + 4n * nonZeros)
  return standard > floor ? standard : floor
}

const DIAMOND_ABI = parseAbi(["function marketTokens(uint256 marketId) view returns (address yes, address no)"])

const quantity = (value: bigint) => `0x${value.toString(16)}`

export const makeAaChain = (options: { readonly rpcUrl: string; readonly entryPoint: Address; readonly diamond: Address }) => {
  const client = createPublicClient({ transport: http(options.rpcUrl, { retryCount: 1, timeout: 10_000 }) })
  /** The EntryPoint v0.7 deploys accounts through its SenderCreator, its first CREATE. */
  const senderCreator = getContractAddress({ from: options.entryPoint, nonce: 1n })
  const unavailable = (what: string) => (error: unknown) =>
    new IndexerUnavailable({
      message: `the chain's RPC did not answer (${what}): ${(error as Error).message?.split("\n")[0] ?? String(error)}`
    })

  const latestBlock = Effect.tryPromise({
    try: () => client.getBlock({ blockTag: "latest" }),
    catch: unavailable("latest block")
  }).pipe(Effect.map((block) => ({ number: block.number, timestamp: block.timestamp })))

  /**
   * Whether the Diamond knows `marketId`: its marketTokens reverts (UnknownMarket) or answers
   * nothing for an unknown one; any other failure (the RPC) is INDEXER_UNAVAILABLE, never "unknown".
   */
  const marketExists = (marketId: bigint) =>
    Effect.tryPromise({
      try: () => client.readContract({ address: options.diamond, abi: DIAMOND_ABI, functionName: "marketTokens", args: [marketId] }),
      catch: (error) => error
    }).pipe(
      Effect.as(true),
      Effect.catchAll((error) =>
        error instanceof BaseError &&
        error.walk((e) => e instanceof ContractFunctionRevertedError || e instanceof ContractFunctionZeroDataError) !== null
          ? Effect.succeed(false)
          : Effect.fail(unavailable("market")(error))
      )
    )

  /**
   * The operation's execution on top of the latest block, in a block one later (`at`: the block
   * the caller read, so the simulated time is the chain's, as the sponsorship window's is).
   * `callGas`: the account frame's gas (the operation's callGasLimit).
   */
  const simulate = (op: UserOperation, callGas: bigint, at: { readonly number: bigint; readonly timestamp: bigint }) =>
    Effect.gen(function* () {
      const deploys = op.factory !== undefined && op.factoryData !== undefined
      const calls = [
        ...(deploys ? [{ from: senderCreator, to: op.factory!, data: op.factoryData! }] : []),
        { from: options.entryPoint, to: op.sender, data: op.callData, gas: quantity(callGas + intrinsicGas(op.callData)) }
      ]
      const blocks = yield* Effect.tryPromise({
        try: () =>
          client.request({
            method: "eth_simulateV1",
            params: [
              {
                blockStateCalls: [{ blockOverrides: { number: quantity(at.number + 1n), time: quantity(at.timestamp + 1n) }, calls }]
              },
              "latest"
            ]
          } as never) as Promise<ReadonlyArray<{ readonly calls: ReadonlyArray<SimulatedCall> }>>,
        catch: unavailable("eth_simulateV1")
      })
      const results = blocks[0]?.calls ?? []
      if (results.length !== calls.length)
        return yield* new IndexerUnavailable({ message: "the chain's eth_simulateV1 answered an unexpected shape" })
      const failed = (call: SimulatedCall) => ({
        data: (call.error?.data ?? call.returnData ?? "0x") as Hex,
        reason: (call.error?.message ?? "reverted").slice(0, 500)
      })
      if (deploys && results[0]!.status !== "0x1") return { _tag: "DeployReverts", ...failed(results[0]!) } satisfies Simulated
      const execution = results[results.length - 1]!
      if (execution.status !== "0x1") return { _tag: "Reverts", ...failed(execution) } satisfies Simulated
      return { _tag: "Succeeds" } satisfies Simulated
    }) as Effect.Effect<Simulated, IndexerUnavailable>

  return { latestBlock, marketExists, simulate }
}

export type AaChain = ReturnType<typeof makeAaChain>
