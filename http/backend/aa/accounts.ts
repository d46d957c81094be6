/**
 * Smart-account addresses: the factory's counterfactual `getAddress(owner, 0)`, read through the
 * chain's RPC (the factory's answer is the address, deployed or not). An owner's address never
 * changes (CREATE2 over the owner and salt), so answers are kept for the process's life.
 */
import { Effect } from "effect"
import { createPublicClient, http, parseAbi, type Address, type Hex } from "viem"
import { IndexerUnavailable } from "../../../schema/errors.js"

const FACTORY_ABI = parseAbi(["function getAddress(bytes owner, uint256 salt) view returns (address)"])

/** The salt every backend-derived account uses. */
export const ACCOUNT_SALT = 0n

export type AccountOf = (owner: Hex) => Effect.Effect<Address, IndexerUnavailable>

export const accountResolver = (rpcUrl: string, factory: Address): AccountOf => {
  const client = createPublicClient({ transport: http(rpcUrl, { retryCount: 1, timeout: 10_000 }) })
  const known = new Map<string, Address>()
  return (owner) => {
    const key = owner.toLowerCase()
    const held = known.get(key)
    if (held !== undefined) return Effect.succeed(held)
    return Effect.tryPromise({
      try: () => client.readContract({ address: factory, abi: FACTORY_ABI, functionName: "getAddress", args: [owner, ACCOUNT_SALT] }),
      catch: (error) =>
        new IndexerUnavailable({
          message: `the smart-account factory could not be read: ${(error as Error).message?.split("\n")[0] ?? String(error)}`
        })
    }).pipe(
      Effect.map((address) => address.toLowerCase() as Address),
      Effect.tap((address) => Effect.sync(() => known.set(key, address)))
    )
  }
}
