/**
 * Smart-account addresses: an owner's counterfactual account at salt 0, read through the chain's
 * RPC (a factory's answer is the address, deployed or not). Which factory depends on the owner:
 * - an ECDSA owner (20 bytes, an EOA): the canonical SimpleAccountFactory v0.7,
 *   `getAddress(address owner, uint256 salt)`: the address permissionless `toSimpleSmartAccount`
 *   computes (it asks the EntryPoint's `getSenderAddress` for the same initCode);
 * - a WebAuthn P-256 owner (64 bytes, abi.encode(x, y)): the project's passkey-account factory,
 *   `getAddress(bytes owner, uint256 salt)`.
 * An owner's address never changes (CREATE2 over the owner and salt), so answers are kept for the
 * process's life.
 */
import { Effect } from "effect"
import { createPublicClient, http, parseAbi, size, type Address, type Hex } from "viem"
import { IndexerUnavailable } from "../../../schema/errors.js"

const PASSKEY_FACTORY_ABI = parseAbi(["function getAddress(bytes owner, uint256 salt) view returns (address)"])
const SIMPLE_FACTORY_ABI = parseAbi(["function getAddress(address owner, uint256 salt) view returns (address)"])

/** The salt every backend-derived account uses. */
export const ACCOUNT_SALT = 0n

/** The two account factories (see the module comment). */
export interface AccountFactories {
  /** ECDSA owners: SimpleAccountFactory v0.7. */
  readonly ecdsa: Address
  /** WebAuthn P-256 owners: the project's factory. */
  readonly passkey: Address
}

export type AccountOf = (owner: Hex) => Effect.Effect<Address, IndexerUnavailable>

export const accountResolver = (rpcUrl: string, factories: AccountFactories): AccountOf => {
  const client = createPublicClient({ transport: http(rpcUrl, { retryCount: 1, timeout: 10_000 }) })
  const known = new Map<string, Address>()
  const read = (owner: Hex): Promise<Address> =>
    // Callers pass a parsed 20-byte address or a registered 64-byte key; anything else is the passkey form.
    size(owner) === 20
      ? client.readContract({
          address: factories.ecdsa,
          abi: SIMPLE_FACTORY_ABI,
          functionName: "getAddress",
          args: [owner as Address, ACCOUNT_SALT]
        })
      : client.readContract({
          address: factories.passkey,
          abi: PASSKEY_FACTORY_ABI,
          functionName: "getAddress",
          args: [owner, ACCOUNT_SALT]
        })
  return (owner) => {
    const key = owner.toLowerCase()
    const held = known.get(key)
    if (held !== undefined) return Effect.succeed(held)
    return Effect.tryPromise({
      try: () => read(owner),
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
