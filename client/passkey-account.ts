/**
 * The project's passkey (WebAuthn P-256) smart account as a viem `SmartAccount`, so viem's and
 * permissionless's stock clients (`createBundlerClient`, `createSmartAccountClient`,
 * `createPaymasterClient`) drive it like any published account. ECDSA owners need no adapter:
 * their account is SimpleAccount v0.7 (`toSimpleSmartAccount` from permissionless).
 *
 * The app brings the passkey: `sign` gets a 32-byte challenge (the user operation's hash, or the
 * EIP-191 / EIP-712 hash of a message) and returns the account's encoding of the WebAuthn
 * assertion over it (`encodeWebAuthnSignature` of `schema/protocol/aa.ts`: authenticator data,
 * client data JSON, r, s). The account's address is the factory's counterfactual one for the key
 * (salt 0), the same the backend names at sign-in.
 */
import { hashMessage, hashTypedData, type Address, type Hex, type PublicClient, type SignableMessage, type TypedDataDefinition } from "viem"
import { entryPoint07Abi, getUserOperationHash, toSmartAccount, type SmartAccount } from "viem/account-abstraction"
import { readContract } from "viem/actions"
import {
  accountFactoryData,
  DEFAULT_ACCOUNT_SALT,
  encodeAccountCalls,
  encodeOwner,
  ENTRY_POINT_V07,
  smartAccountFactoryAbi,
  type AccountOwner
} from "../schema/protocol/aa.js"

export interface PasskeyAccountOptions {
  /** A client of the chain (its `chain` set: nonces and hashes need the chain id). */
  readonly client: PublicClient
  /** The deployment's passkey account factory (`smartAccountFactory` of the devnet manifest). */
  readonly factory: Address
  readonly entryPoint?: Address
  /** The passkey's P-256 public key. */
  readonly publicKey: { readonly x: bigint; readonly y: bigint }
  /** The WebAuthn assertion over `challenge`, in the account's signature encoding. */
  readonly sign: (challenge: Hex) => Promise<Hex>
  /** A signature of the real one's shape, for gas estimation (any assertion, e.g. over 32 zero bytes). */
  readonly stubSignature: Hex
}

export const toPasskeySmartAccount = async (options: PasskeyAccountOptions): Promise<SmartAccount> => {
  const { client, factory, sign } = options
  const entryPoint = options.entryPoint ?? ENTRY_POINT_V07
  const owner: AccountOwner = { kind: "p256", x: options.publicKey.x, y: options.publicKey.y }
  const address = await readContract(client, {
    address: factory,
    abi: smartAccountFactoryAbi,
    functionName: "getAddress",
    args: [encodeOwner(owner), DEFAULT_ACCOUNT_SALT]
  })
  const chainId = client.chain?.id
  if (chainId === undefined)
    throw new Error("toPasskeySmartAccount: the client needs its chain (the user operation hash includes the chain id)")
  return toSmartAccount({
    client,
    entryPoint: { abi: entryPoint07Abi, address: entryPoint, version: "0.7" },
    getAddress: async () => address,
    encodeCalls: async (calls) =>
      encodeAccountCalls(calls.map((call) => ({ target: call.to, value: call.value ?? 0n, data: call.data ?? "0x" }))),
    getFactoryArgs: async () => accountFactoryData(factory, owner),
    getStubSignature: async () => options.stubSignature,
    // ERC-1271: the account checks an assertion over the hash it is asked about.
    signMessage: async ({ message }: { message: SignableMessage }) => sign(hashMessage(message)),
    signTypedData: async (typedData) => sign(hashTypedData(typedData as TypedDataDefinition)),
    signUserOperation: async ({ chainId: opChainId, ...userOperation }) =>
      sign(
        getUserOperationHash({
          chainId: opChainId ?? chainId,
          entryPointAddress: entryPoint,
          entryPointVersion: "0.7",
          userOperation: { ...userOperation, sender: address }
        })
      )
  })
}
