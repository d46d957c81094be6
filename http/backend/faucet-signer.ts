/**
 * One signer per key: every transaction the key signs goes through `send`, which is where its
 * nonces are allocated (the `signer_nonce` row, locked) and where the signed bytes are recorded
 * before they are broadcast.
 *
 * Invariants:
 * - nonce allocation, signing and the caller's `record` of the signed transaction commit in ONE
 *   database transaction under the key's row lock: concurrent sends (in one process or many)
 *   never share a nonce, and no transaction is broadcast that is not recorded;
 * - broadcasting recorded bytes again is harmless (same hash): after a crash, `rebroadcast`
 *   re-sends exactly what was recorded, never a newly signed transaction;
 * - the private key is held only by the viem account; it is never logged or put in an error.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Data, Effect, Redacted } from "effect"
import { createPublicClient, http, keccak256, type Address, type Hex, type PublicClient } from "viem"
import { privateKeyToAccount } from "viem/accounts"

export class SignerError extends Data.TaggedError("SignerError")<{ readonly message: string }> {}

export interface Call {
  readonly to: Address
  readonly data: Hex
  readonly value: bigint
}

export interface Signed {
  readonly nonce: number
  readonly rawTx: Hex
  readonly hash: Hex
}

export type ReceiptStatus = "success" | "reverted" | "pending"

const reason = (cause: unknown) => {
  const error = cause as { shortMessage?: string; message?: string }
  return (error.shortMessage ?? error.message ?? String(cause)).split("\n")[0]!
}

export const makeSigner = (options: { readonly rpcUrl: string; readonly chainId: number; readonly privateKey: Redacted.Redacted<Hex> }) => {
  const account = privateKeyToAccount(Redacted.value(options.privateKey))
  const signer = account.address.toLowerCase() as Address
  const client: PublicClient = createPublicClient({ transport: http(options.rpcUrl, { retryCount: 1 }) })
  const chain = <A>(what: string, run: () => Promise<A>) =>
    Effect.tryPromise({ try: run, catch: (cause) => new SignerError({ message: `${what}: ${reason(cause)}` }) })

  /**
   * Simulates `call` (a revert or an unaffordable transfer fails here, with nothing allocated),
   * then allocates the nonce, signs, and runs `record(signed)` in one transaction; then broadcasts.
   */
  const send = <E, R>(call: Call, record: (signed: Signed) => Effect.Effect<void, E, R>) =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const gas = yield* chain("the transaction would fail", () => client.estimateGas({ account: signer, ...call }))
      const block = yield* chain("reading the chain", () => client.getBlock())
      const priority = 1_000_000_000n
      const maxFeePerGas = (block.baseFeePerGas ?? 0n) * 2n + priority
      const balance = yield* chain("reading the signer's balance", () => client.getBalance({ address: signer }))
      if (balance < call.value + gas * maxFeePerGas) {
        return yield* new SignerError({ message: `the signer ${signer} holds too little ETH for this transfer and its gas` })
      }
      const onChain = yield* chain("reading the signer's nonce", () => client.getTransactionCount({ address: signer, blockTag: "pending" }))
      const signed = yield* sql.withTransaction(
        Effect.gen(function* () {
          yield* sql`INSERT INTO signer_nonce (signer, next_nonce) VALUES (${signer}, ${onChain}) ON CONFLICT (signer) DO NOTHING`
          const [row] = yield* sql<{ next: string }>`SELECT next_nonce::text AS next FROM signer_nonce WHERE signer = ${signer} FOR UPDATE`
          // The chain may know later nonces (the key used elsewhere): never reuse one.
          const nonce = Math.max(Number(row!.next), onChain)
          const rawTx = yield* chain("signing", () =>
            account.signTransaction({
              type: "eip1559", chainId: options.chainId, nonce, gas: (gas * 12n) / 10n, maxFeePerGas, maxPriorityFeePerGas: priority, ...call
            })
          )
          const result: Signed = { nonce, rawTx, hash: keccak256(rawTx) }
          yield* record(result)
          yield* sql`UPDATE signer_nonce SET next_nonce = ${nonce + 1} WHERE signer = ${signer}`
          return result
        })
      )
      yield* broadcast(signed.rawTx)
      return signed
    })

  /** Sends recorded bytes; "already known" and "nonce too low" (it was mined) are not failures. */
  const broadcast = (rawTx: Hex) =>
    chain("broadcasting", () => client.request({ method: "eth_sendRawTransaction", params: [rawTx] })).pipe(
      Effect.asVoid,
      Effect.catchIf((e) => /already known|nonce too low|already imported/i.test(e.message), () => Effect.void)
    )

  /** The transaction's receipt status, polling up to `timeoutMs`; "pending" when none came. */
  const receipt = (hash: Hex, timeoutMs: number): Effect.Effect<ReceiptStatus, SignerError> =>
    chain("waiting for the receipt", () =>
      client.waitForTransactionReceipt({ hash, timeout: timeoutMs, pollingInterval: 100 }).then(
        (r) => (r.status === "success" ? "success" : "reverted") as ReceiptStatus,
        (error: { name?: string }) => {
          if (error.name === "WaitForTransactionReceiptTimeoutError") return "pending" as const
          throw error
        }
      )
    )

  const read = <A>(what: string, run: (client: PublicClient) => Promise<A>) => chain(what, () => run(client))

  return { address: signer, send, broadcast, receipt, read }
}

export type Signer = ReturnType<typeof makeSigner>
export type SendError = SignerError | SqlError
