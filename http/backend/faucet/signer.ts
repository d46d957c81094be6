/**
 * One signer per key: every transaction the key signs goes through `sign`, which is where its
 * nonces are allocated (the `signer_nonce` row, locked) and where the signed bytes are recorded
 * before anything is broadcast.
 *
 * Invariants:
 * - nonce allocation, signing and the caller's `record` of the signed transaction commit in ONE
 *   database transaction under the key's row lock: concurrent sends (in one process or many)
 *   never share a nonce, and no transaction is broadcast that is not recorded;
 * - broadcasting recorded bytes again is harmless (same hash): after a crash, `broadcast`
 *   re-sends exactly what was recorded, never a newly signed transaction;
 * - an allocated nonce is never left as a gap (a gap stalls every later transaction of the key):
 *   when a broadcast fails, `fillGap` either finds the node holding the transaction after all, or
 *   consumes the nonce with a no-op replacement (0 ETH to itself, higher fees) and waits until
 *   the nonce is mined: by the no-op ("cancelled", the original can never be mined now) or by
 *   the original ("sent"); on a chain that lost allocated nonces (rewound), the faucet re-sends
 *   their recorded transactions and fills the rest with no-ops (`fillNonce`) before it signs again;
 * - the private key is held only by the viem account; it is never logged or put in an error.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Data, Effect, Redacted } from "effect"
import { createPublicClient, http, keccak256, type Address, type Hex, type PublicClient } from "viem"
import { privateKeyToAccount } from "viem/accounts"

/**
 * Why the signer could not do what it was asked: `dry` (the key holds too little ETH for the
 * value and gas), `refused` (the call would revert: simulated before anything is allocated),
 * `chain` (the node could not be reached or answered an error).
 */
export class SignerError extends Data.TaggedError("SignerError")<{
  readonly kind: "dry" | "refused" | "chain"
  readonly message: string
}> {}

export interface Call {
  readonly to: Address
  readonly data: Hex
  readonly value: bigint
}

export interface Signed {
  readonly nonce: number
  readonly rawTx: Hex
  readonly hash: Hex
  readonly maxFeePerGas: bigint
  readonly maxPriorityFeePerGas: bigint
}

export type ReceiptStatus = "success" | "reverted" | "pending"

/** How a nonce whose broadcast failed was settled: the original is on the node after all, or a no-op took the nonce. */
export type GapOutcome = "sent" | "cancelled"

const reason = (cause: unknown) => {
  const error = cause as { shortMessage?: string; message?: string }
  return (error.shortMessage ?? error.message ?? String(cause)).split("\n")[0]!
}

/** Replacement fees: at least 20% above the original's (nodes want 10%), and above today's base fee. */
const bump = (fee: bigint, floor: bigint) => {
  const raised = (fee * 12n) / 10n + 1n
  return raised > floor ? raised : floor
}

export const makeSigner = (options: { readonly rpcUrl: string; readonly chainId: number; readonly privateKey: Redacted.Redacted<Hex> }) => {
  const account = privateKeyToAccount(Redacted.value(options.privateKey))
  const signer = account.address.toLowerCase() as Address
  const client: PublicClient = createPublicClient({ transport: http(options.rpcUrl, { retryCount: 1 }) })
  const chain = <A>(what: string, run: () => Promise<A>, kind: SignerError["kind"] = "chain") =>
    Effect.tryPromise({ try: run, catch: (cause) => new SignerError({ kind, message: `${what}: ${reason(cause)}` }) })

  const fees = Effect.map(
    chain("reading the chain", () => client.getBlock()),
    (block) => {
      const priority = 1_000_000_000n
      return { maxFeePerGas: (block.baseFeePerGas ?? 0n) * 2n + priority, maxPriorityFeePerGas: priority }
    }
  )

  /**
   * Simulates `call` (a revert or an unaffordable transfer fails here, with nothing allocated),
   * then allocates the nonce, signs, and runs `record(signed)` in one transaction. Nothing is
   * broadcast: the caller broadcasts the recorded bytes (`broadcast`) once this has committed.
   */
  const sign = <E, R>(call: Call, record: (signed: Signed) => Effect.Effect<void, E, R>) =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const balance = yield* chain("reading the signer's balance", () => client.getBalance({ address: signer }))
      const tooLittle = new SignerError({ kind: "dry", message: `its key ${signer} holds too little ETH for this transfer and its gas` })
      if (balance < call.value) return yield* tooLittle
      const gas = yield* chain("the transaction would fail", () => client.estimateGas({ account: signer, ...call }), "refused").pipe(
        Effect.catchIf(
          (e) => /insufficient funds/i.test(e.message),
          () => Effect.fail(tooLittle)
        )
      )
      const { maxFeePerGas, maxPriorityFeePerGas } = yield* fees
      if (balance < call.value + gas * maxFeePerGas) return yield* tooLittle
      const onChain = yield* chain("reading the signer's nonce", () => client.getTransactionCount({ address: signer, blockTag: "pending" }))
      return yield* sql.withTransaction(
        Effect.gen(function* () {
          yield* sql`INSERT INTO signer_nonce (signer, next_nonce) VALUES (${signer}, ${onChain}) ON CONFLICT (signer) DO NOTHING`
          const [row] = yield* sql<{ next: string }>`SELECT next_nonce::text AS next FROM signer_nonce WHERE signer = ${signer} FOR UPDATE`
          // The chain may know later nonces (the key used elsewhere): never reuse one.
          const nonce = Math.max(Number(row!.next), onChain)
          const rawTx = yield* chain("signing", () =>
            account.signTransaction({
              type: "eip1559",
              chainId: options.chainId,
              nonce,
              gas: (gas * 12n) / 10n,
              maxFeePerGas,
              maxPriorityFeePerGas,
              ...call
            })
          )
          const result: Signed = { nonce, rawTx, hash: keccak256(rawTx), maxFeePerGas, maxPriorityFeePerGas }
          yield* record(result)
          yield* sql`UPDATE signer_nonce SET next_nonce = ${nonce + 1} WHERE signer = ${signer}`
          return result
        })
      )
    })

  /** Sends recorded bytes; "already known" and "nonce too low" (it was mined) are not failures. */
  const broadcast = (rawTx: Hex) =>
    chain("broadcasting", () => client.request({ method: "eth_sendRawTransaction", params: [rawTx] })).pipe(
      Effect.asVoid,
      Effect.catchIf(
        (e) => /already known|nonce too low|already imported/i.test(e.message),
        () => Effect.void
      )
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

  /** Whether the chain has mined a transaction of this key at `nonce` (whichever one). */
  const nonceUsed = (nonce: number) =>
    Effect.map(
      chain("reading the signer's nonce", () => client.getTransactionCount({ address: signer, blockTag: "latest" })),
      (mined) => mined > nonce
    )

  /**
   * After `signed`'s broadcast failed: "sent" when the node holds it after all (the answer was
   * lost, not the transaction), else its nonce is consumed by a no-op replacement, mined within
   * `timeoutMs`, and the outcome says which of the two the chain took.
   */
  const fillGap = (signed: Signed, timeoutMs: number): Effect.Effect<GapOutcome, SignerError> =>
    Effect.gen(function* () {
      const known = yield* chain("looking the transaction up", () => client.getTransaction({ hash: signed.hash })).pipe(
        Effect.as(true),
        Effect.catchIf(
          (e) => /could not be found|not found/i.test(e.message),
          () => Effect.succeed(false)
        )
      )
      if (known) return "sent" as const
      const now = yield* fees
      const noop = yield* chain("signing the replacement", () =>
        account.signTransaction({
          type: "eip1559",
          chainId: options.chainId,
          nonce: signed.nonce,
          to: signer,
          value: 0n,
          gas: 21_000n,
          maxFeePerGas: bump(signed.maxFeePerGas, now.maxFeePerGas),
          maxPriorityFeePerGas: bump(signed.maxPriorityFeePerGas, now.maxPriorityFeePerGas)
        })
      )
      yield* broadcast(noop)
      const cancelled = yield* receipt(keccak256(noop), timeoutMs)
      if (cancelled !== "pending") return "cancelled" as const
      // The no-op did not come: the original may have taken the nonce.
      const original = yield* receipt(signed.hash, 1)
      if (original !== "pending") return "sent" as const
      return yield* new SignerError({
        kind: "chain",
        message: `nonce ${signed.nonce} of ${signer} is still open after a failed broadcast and its replacement`
      })
    })

  const read = <A>(what: string, run: (client: PublicClient) => Promise<A>) => chain(what, () => run(client))

  /** Whether the chain holds the transaction `hash` now (mined): its status, or "absent"; no waiting. */
  const onChain = (hash: Hex): Effect.Effect<"success" | "reverted" | "absent", SignerError> =>
    chain("looking the receipt up", () =>
      client.getTransactionReceipt({ hash }).then(
        (r) => (r.status === "success" ? "success" : "reverted") as "success" | "reverted",
        (error: { name?: string }) => {
          if (error.name === "TransactionReceiptNotFoundError") return "absent" as const
          throw error
        }
      )
    )

  /**
   * The hash of the key's mined transaction at `nonce`, looked for in the blocks from the head back
   * to the first one older than `since` (unix seconds), at most `maxBlocks` of them; undefined when
   * none of them holds it. A saved anvil state can hold a block's effects (the key's nonce, the
   * transfer) without that block (dumped while it was being mined): then the nonce is used and no
   * block shows by what.
   */
  const minedAtNonce = (nonce: number, since: number, maxBlocks = 2_000) =>
    Effect.gen(function* () {
      const head = yield* chain("reading the chain", () => client.getBlockNumber())
      for (let n = head, seen = 0; n >= 0n && seen < maxBlocks; n--, seen++) {
        // Such a state also names a head whose last blocks it does not hold: those are skipped.
        const block = yield* chain("reading a block", () =>
          client.getBlock({ blockNumber: n, includeTransactions: true }).catch((error: { name?: string }) => {
            if (error.name === "BlockNotFoundError") return undefined
            throw error
          })
        )
        if (block === undefined) continue
        const found = block.transactions.find((tx) => tx.from.toLowerCase() === signer && tx.nonce === nonce)
        if (found !== undefined) return found.hash
        if (Number(block.timestamp) < since) return undefined
      }
      return undefined
    })

  /** How many transactions of this key the chain has mined (the next nonce it will accept to mine). */
  const minedNonce = chain("reading the signer's nonce", () => client.getTransactionCount({ address: signer, blockTag: "latest" }))

  /**
   * Takes `nonce` with a no-op (0 ETH to itself): a nonce allocated on a chain that lost its
   * transaction (the chain was rewound) must be filled, or every later transaction of the key waits
   * behind it. Broadcast only; the caller waits for the later nonces' receipts.
   */
  const fillNonce = (nonce: number) =>
    Effect.gen(function* () {
      const now = yield* fees
      const noop = yield* chain("signing a no-op", () =>
        account.signTransaction({ type: "eip1559", chainId: options.chainId, nonce, to: signer, value: 0n, gas: 21_000n, ...now })
      )
      yield* broadcast(noop)
      return keccak256(noop)
    })

  return { address: signer, sign, broadcast, receipt, nonceUsed, fillGap, read, onChain, minedNonce, minedAtNonce, fillNonce }
}

export type Signer = ReturnType<typeof makeSigner>
export type SendError = SignerError | SqlError
