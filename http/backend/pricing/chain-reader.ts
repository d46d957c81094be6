/**
 * Reads the backend needs from the chain itself, for what the index deliberately does not hold:
 * USDC balances (the collateral token is busy on a real chain; indexing every transfer of it for
 * a balance check is not worth it). Through the JSON-RPC endpoint the backend is given (RPC_URL,
 * or the live devnet's), behind a circuit breaker of its own (the `CircuitBreaker` of
 * breaker.ts): a node that fails `threshold` times in a row is not asked again for `openFor`, and
 * callers get INDEXER_UNAVAILABLE at once.
 *
 * Without an RPC endpoint the reader is absent, and a caller answers a typed error naming the
 * field that needed it rather than guessing a balance.
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import { createPublicClient, http, parseAbi, type Address, type PublicClient } from "viem"
import { IndexerUnavailable } from "../../../schema/errors.js"
import { CircuitBreaker } from "../edge/breaker.js"

const ABI = parseAbi(["function usdc() view returns (address)", "function balanceOf(address) view returns (uint256)"])

export interface ChainReaderOptions {
  readonly rpcUrl: string
  readonly chainId: number
  readonly threshold?: number
  readonly openForMs?: number
}

const reason = (cause: unknown) =>
  ((cause as { shortMessage?: string; message?: string }).shortMessage ?? (cause as Error).message ?? String(cause)).split("\n")[0]!

export const makeChainReader = (options: ChainReaderOptions) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const client: PublicClient = createPublicClient({ transport: http(options.rpcUrl, { retryCount: 0, timeout: 5_000 }) })
    const breaker = new CircuitBreaker({ threshold: options.threshold ?? 3, openForMs: options.openForMs ?? 5_000 })
    const down = (message: string) =>
      new IndexerUnavailable({ message: `the chain node is unavailable (${message}); retry in ${breaker.retryInSeconds()} s` })

    /** One chain call behind the breaker. */
    const call = <A>(run: () => Promise<A>) =>
      Effect.suspend(() => {
        if (!breaker.admit()) return Effect.fail(down("too many failed calls"))
        return Effect.tryPromise({ try: run, catch: (cause) => down(reason(cause)) }).pipe(
          Effect.tapBoth({ onFailure: () => Effect.sync(() => breaker.failure()), onSuccess: () => Effect.sync(() => breaker.success()) }),
          Effect.onInterrupt(() => Effect.sync(() => breaker.release()))
        )
      })

    /** The collateral token: the indexed deployment's diamond names it (kept once read). */
    let token: Address | undefined
    const usdc = Effect.suspend(() =>
      token !== undefined
        ? Effect.succeed(token)
        : Effect.gen(function* () {
            const [row] = yield* sql<{ diamond: Address }>`select diamond from indexed_deployment where chain_id = ${options.chainId}`.pipe(
              Effect.mapError(() => new IndexerUnavailable({ message: "the database is unavailable" }))
            )
            if (row === undefined)
              return yield* new IndexerUnavailable({ message: "nothing is indexed yet: the collateral token is not known" })
            token = yield* call(() => client.readContract({ address: row.diamond, abi: ABI, functionName: "usdc" }))
            return token
          })
    )

    /**
     * `owner`'s USDC balance at `block` (the block a quote is computed at); the node's latest when
     * it no longer holds that block's state.
     */
    const usdcBalance = (owner: Address, block: number | null) =>
      Effect.gen(function* () {
        const token = yield* usdc
        const read = (blockNumber: bigint | undefined) => () =>
          client.readContract({
            address: token,
            abi: ABI,
            functionName: "balanceOf",
            args: [owner],
            ...(blockNumber === undefined ? {} : { blockNumber })
          })
        return yield* block === null ? call(read(undefined)) : call(read(BigInt(block))).pipe(Effect.catchAll(() => call(read(undefined))))
      })

    return { usdcBalance, breaker }
  })

export type ChainReaderService = Effect.Effect.Success<ReturnType<typeof makeChainReader>>

/** The chain reader of this backend, or none when it has no RPC endpoint. */
export class ChainReader extends Context.Tag("predix/ChainReader")<ChainReader, Option.Option<ChainReaderService>>() {}

export const ChainReaderLive = (options: ChainReaderOptions | undefined) =>
  Layer.effect(ChainReader, options === undefined ? Effect.succeed(Option.none()) : Effect.map(makeChainReader(options), Option.some))
