/**
 * Test-side account abstraction: owners that sign like real wallets (an ECDSA key; a software
 * passkey, a P-256 key producing real WebAuthn assertions and registrations), and a client that
 * builds, sponsors, signs, estimates and sends ERC-4337 v0.7 user operations through a bundler.
 * `startAaDevnet` (aa-devnet.ts) gives a live devnet with its own alto to run them against.
 */
import { createHash, createSign, generateKeyPairSync, randomBytes, type KeyObject } from "node:crypto"
import { bytesToHex, concat, createPublicClient, http, numberToHex, type Address, type Hex, type PublicClient } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import {
  accountFactoryData,
  base64Url,
  encodeAccountCalls,
  encodeOwner,
  encodePaymasterData,
  encodeWebAuthnSignature,
  entryPointAbi,
  paymasterHash,
  smartAccountFactoryAbi,
  userOperationHash,
  webAuthnClientData,
  DEFAULT_ACCOUNT_SALT,
  type AccountCall,
  type AccountOwner,
  type PaymasterWindow,
  type UserOperationV07
} from "../../schema/protocol/aa.js"

// ---------------------------------------------------------------------------------------------
// Owners

/** Signs user-operation hashes (and ERC-1271 hashes) for the account it owns. */
export interface AccountSigner {
  readonly owner: AccountOwner
  /** `userOp.signature` for `userOpHash`. */
  readonly signUserOperationHash: (userOpHash: Hex) => Promise<Hex>
}

/** An EOA owner: 65 bytes over the EIP-191 hash of userOpHash. */
export const ecdsaSigner = (privateKey: Hex): AccountSigner & { readonly address: Address } => {
  const account = privateKeyToAccount(privateKey)
  return {
    address: account.address.toLowerCase() as Address,
    owner: { kind: "ecdsa", address: account.address.toLowerCase() as Address },
    signUserOperationHash: (hash) => account.signMessage({ message: { raw: hash } })
  }
}

/** What an authenticator returns for `navigator.credentials.get`, raw and as the account encodes it. */
export interface PasskeyAssertion {
  readonly authenticatorData: Uint8Array
  readonly clientDataJSON: string
  readonly challengeIndex: number
  readonly typeIndex: number
  readonly r: bigint
  readonly s: bigint
  /** ASN.1 DER signature, as WebAuthn's AuthenticatorAssertionResponse carries it. */
  readonly signatureDer: Uint8Array
  /** `userOp.signature` / ERC-1271 signature encoding (schema/protocol/aa.ts). */
  readonly encoded: Hex
}

export interface SoftwarePasskey extends AccountSigner {
  readonly credentialId: Uint8Array
  readonly x: bigint
  readonly y: bigint
  /** Signature counter (incremented by each assertion, as authenticators with a counter do). */
  readonly counter: () => number
  /** A WebAuthn assertion of `challenge` (raw bytes; base64url-encoded into clientDataJSON). */
  readonly assert: (
    challenge: Hex | Uint8Array,
    options?: { readonly origin?: string; readonly rpId?: string; readonly userPresent?: boolean; readonly userVerified?: boolean }
  ) => PasskeyAssertion
  /** A "none"-attestation registration (`navigator.credentials.create`) for `challenge`. */
  readonly register: (
    challenge: Hex | Uint8Array,
    options?: { readonly origin?: string; readonly rpId?: string }
  ) => {
    readonly clientDataJSON: string
    readonly attestationObject: Uint8Array
  }
}

const sha256 = (...parts: ReadonlyArray<Uint8Array | string>) => {
  const hash = createHash("sha256")
  for (const part of parts) hash.update(part)
  return new Uint8Array(hash.digest())
}
const toBytes = (value: Hex | Uint8Array) => (typeof value === "string" ? new Uint8Array(Buffer.from(value.slice(2), "hex")) : value)
const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n

/** DER SEQUENCE { INTEGER r, INTEGER s }. */
const derSignature = (r: bigint, s: bigint) => {
  const integer = (v: bigint) => {
    let bytes = Buffer.from(v.toString(16).padStart(64, "0"), "hex")
    while (bytes.length > 1 && bytes[0] === 0 && (bytes[1]! & 0x80) === 0) bytes = bytes.subarray(1)
    if ((bytes[0]! & 0x80) !== 0) bytes = Buffer.concat([Buffer.from([0]), bytes])
    return Buffer.concat([Buffer.from([0x02, bytes.length]), bytes])
  }
  const body = Buffer.concat([integer(r), integer(s)])
  return new Uint8Array(Buffer.concat([Buffer.from([0x30, body.length]), body]))
}

/** Minimal CBOR (RFC 8949) for attestation objects: unsigned/negative ints, byte and text strings, maps. */
type Cbor = number | string | Uint8Array | ReadonlyArray<readonly [Cbor, Cbor]>
const cborHead = (major: number, length: number) => {
  if (length < 24) return Buffer.from([(major << 5) | length])
  if (length < 256) return Buffer.from([(major << 5) | 24, length])
  return Buffer.from([(major << 5) | 25, length >> 8, length & 0xff])
}
const cbor = (value: Cbor): Buffer => {
  if (typeof value === "number") return value >= 0 ? cborHead(0, value) : cborHead(1, -1 - value)
  if (typeof value === "string") return Buffer.concat([cborHead(3, Buffer.byteLength(value)), Buffer.from(value)])
  if (value instanceof Uint8Array) return Buffer.concat([cborHead(2, value.length), Buffer.from(value)])
  return Buffer.concat([cborHead(5, value.length), ...value.flatMap(([k, v]) => [cbor(k), cbor(v)])])
}

/**
 * A passkey held in software: a fresh P-256 key (node:crypto) that answers WebAuthn ceremonies
 * like a platform authenticator (user present and verified), for `rpId` (default "localhost")
 * and `origin` (default "http://localhost:3000").
 */
export const softwarePasskey = (defaults: { readonly origin?: string; readonly rpId?: string } = {}): SoftwarePasskey => {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" }) as { privateKey: KeyObject; publicKey: KeyObject }
  const jwk = publicKey.export({ format: "jwk" })
  const xBytes = new Uint8Array(Buffer.from(jwk.x!, "base64url"))
  const yBytes = new Uint8Array(Buffer.from(jwk.y!, "base64url"))
  const x = BigInt(bytesToHex(xBytes))
  const y = BigInt(bytesToHex(yBytes))
  const credentialId = new Uint8Array(randomBytes(16))
  let signCount = 0
  const origin = (o?: string) => o ?? defaults.origin ?? "http://localhost:3000"
  const rpId = (r?: string) => r ?? defaults.rpId ?? "localhost"

  const assert: SoftwarePasskey["assert"] = (challenge, options = {}) => {
    signCount += 1
    // Flags: UP (0x01) user present, UV (0x04) user verified.
    const flags = (options.userPresent === false ? 0 : 0x01) | (options.userVerified === false ? 0 : 0x04)
    const counter = Buffer.alloc(4)
    counter.writeUInt32BE(signCount)
    const authenticatorData = new Uint8Array(Buffer.concat([sha256(rpId(options.rpId)), Buffer.from([flags]), counter]))
    const challengeHex = typeof challenge === "string" ? challenge : bytesToHex(challenge)
    const client = webAuthnClientData(challengeHex, origin(options.origin))
    const raw = createSign("sha256")
      .update(authenticatorData)
      .update(sha256(client.clientDataJSON))
      .sign({ key: privateKey, dsaEncoding: "ieee-p1363" })
    const r = BigInt(`0x${raw.subarray(0, 32).toString("hex")}`)
    let s = BigInt(`0x${raw.subarray(32).toString("hex")}`)
    // The account takes low s only; (r, n - s) is the same signature's other form.
    if (s > P256_N / 2n) s = P256_N - s
    const encoded = encodeWebAuthnSignature({
      authenticatorData: bytesToHex(authenticatorData),
      clientDataJSON: client.clientDataJSON,
      challengeIndex: client.challengeIndex,
      typeIndex: client.typeIndex,
      r,
      s
    })
    return {
      authenticatorData,
      clientDataJSON: client.clientDataJSON,
      challengeIndex: client.challengeIndex,
      typeIndex: client.typeIndex,
      r,
      s,
      signatureDer: derSignature(r, s),
      encoded
    }
  }

  const register: SoftwarePasskey["register"] = (challenge, options = {}) => {
    const clientDataJSON = JSON.stringify({
      type: "webauthn.create",
      challenge: base64Url(toBytes(challenge)),
      origin: origin(options.origin),
      crossOrigin: false
    })
    const coseKey = cbor([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, xBytes],
      [-3, yBytes]
    ])
    const idLength = Buffer.alloc(2)
    idLength.writeUInt16BE(credentialId.length)
    const authData = Buffer.concat([
      sha256(rpId(options.rpId)),
      Buffer.from([0x45]), // UP | UV | AT (attested credential data follows)
      Buffer.alloc(4), // counter 0
      Buffer.alloc(16), // AAGUID: none
      idLength,
      credentialId,
      coseKey
    ])
    const attestationObject = new Uint8Array(
      cbor([
        ["fmt", "none"],
        ["attStmt", []],
        ["authData", new Uint8Array(authData)]
      ])
    )
    return { clientDataJSON, attestationObject }
  }

  return {
    owner: { kind: "p256", x, y },
    credentialId,
    x,
    y,
    counter: () => signCount,
    assert,
    register,
    signUserOperationHash: async (hash) => assert(hash).encoded
  }
}

// ---------------------------------------------------------------------------------------------
// User operations

export interface AaChain {
  readonly rpcUrl: string
  readonly bundlerUrl: string
  readonly chainId: number
  readonly entryPoint: Address
  readonly smartAccountFactory: Address
  readonly paymaster: Address
}

export class BundlerRpcError extends Error {
  override readonly name = "BundlerRpcError"
  constructor(
    readonly code: number,
    message: string,
    readonly data: unknown
  ) {
    super(`bundler error ${code}: ${message}`)
  }
}

type Quantity = Hex
/** A user operation as the bundler's JSON-RPC carries it (quantities as hex). */
export type UserOperationJson = Record<string, Hex | Address | null>

/** The unpacked operation in the bundler's JSON form (optional parts left out when absent). */
export const userOperationToJson = (op: UserOperationV07): UserOperationJson => {
  const q = (v: bigint): Quantity => numberToHex(v)
  const json: UserOperationJson = {
    sender: op.sender,
    nonce: q(op.nonce),
    callData: op.callData,
    callGasLimit: q(op.callGasLimit),
    verificationGasLimit: q(op.verificationGasLimit),
    preVerificationGas: q(op.preVerificationGas),
    maxFeePerGas: q(op.maxFeePerGas),
    maxPriorityFeePerGas: q(op.maxPriorityFeePerGas),
    signature: op.signature
  }
  if (op.factory !== undefined) Object.assign(json, { factory: op.factory, factoryData: op.factoryData ?? "0x" })
  if (op.paymaster !== undefined) {
    Object.assign(json, {
      paymaster: op.paymaster,
      paymasterVerificationGasLimit: q(op.paymasterVerificationGasLimit ?? 0n),
      paymasterPostOpGasLimit: q(op.paymasterPostOpGasLimit ?? 0n),
      paymasterData: op.paymasterData ?? "0x"
    })
  }
  return json
}

/** The sponsorship the paymaster's signer gives `op` for `window` (what the backend's sponsor endpoint signs). */
export const sponsorUserOperation = async (
  op: UserOperationV07,
  sponsor: { readonly chainId: number; readonly paymaster: Address; readonly signerKey: Hex; readonly window: PaymasterWindow }
): Promise<UserOperationV07> => {
  const withPaymaster: UserOperationV07 = {
    ...op,
    paymaster: sponsor.paymaster,
    paymasterVerificationGasLimit: op.paymasterVerificationGasLimit ?? PAYMASTER_VERIFICATION_GAS,
    paymasterPostOpGasLimit: op.paymasterPostOpGasLimit ?? 0n
  }
  const hash = paymasterHash(withPaymaster, sponsor.chainId, sponsor.paymaster, sponsor.window)
  const signature = await privateKeyToAccount(sponsor.signerKey).signMessage({ message: { raw: hash } })
  return { ...withPaymaster, paymasterData: encodePaymasterData(sponsor.window, signature) }
}

/** Paymaster verification gas (its validatePaymasterUserOp: a hash and one ecrecover, with margin). */
export const PAYMASTER_VERIFICATION_GAS = 60_000n
/** Stand-in signatures for estimation: the right length, failing the check without reverting. */
const DUMMY_ECDSA_SIGNATURE = concat([`0x${"ff".repeat(32)}`, `0x${"7f".repeat(32)}`, "0x1c"]) as Hex
const DUMMY_PAYMASTER_SIGNATURE = DUMMY_ECDSA_SIGNATURE

/**
 * Builds and sends user operations for accounts of `chain`'s factory through its bundler.
 * Every step is separate so a test can tamper between them.
 */
export class AaClient {
  readonly public: PublicClient

  constructor(readonly chain: AaChain) {
    this.public = createPublicClient({ transport: http(chain.rpcUrl, { retryCount: 0 }) })
  }

  /** A JSON-RPC call to the bundler; its error comes back as a BundlerRpcError. */
  async bundler<T>(method: string, params: ReadonlyArray<unknown>): Promise<T> {
    const response = await fetch(this.chain.bundlerUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params })
    })
    const body = (await response.json()) as { result?: T; error?: { code: number; message: string; data?: unknown } }
    if (body.error !== undefined) throw new BundlerRpcError(body.error.code, body.error.message, body.error.data)
    return body.result as T
  }

  /** The counterfactual account of `owner` (salt 0 by default), deployed or not. */
  async accountAddress(owner: AccountOwner, salt = DEFAULT_ACCOUNT_SALT): Promise<Address> {
    const address = await this.public.readContract({
      address: this.chain.smartAccountFactory,
      abi: smartAccountFactoryAbi,
      functionName: "getAddress",
      args: [encodeOwner(owner), salt]
    })
    return address.toLowerCase() as Address
  }

  async isDeployed(account: Address): Promise<boolean> {
    return (await this.public.getCode({ address: account })) !== undefined
  }

  /**
   * An unsigned operation of `signer`'s account making `calls`: factory data when the account
   * is not deployed yet, the EntryPoint's nonce, fees from the chain, gas limits from the
   * bundler's estimate (with a paymaster stand-in when `sponsored`), the signature left empty.
   */
  async prepare(
    signer: AccountSigner,
    calls: ReadonlyArray<AccountCall>,
    options: { readonly sponsored?: boolean } = {}
  ): Promise<UserOperationV07> {
    const sender = await this.accountAddress(signer.owner)
    const deployed = await this.isDeployed(sender)
    const nonce = await this.public.readContract({
      address: this.chain.entryPoint,
      abi: entryPointAbi,
      functionName: "getNonce",
      args: [sender, 0n]
    })
    // Fees from the chain (not pimlico_getUserOperationGasPrice, which a method allow-list may refuse): twice the base fee plus the tip.
    const block = await this.public.getBlock()
    const maxPriorityFeePerGas = await this.public.estimateMaxPriorityFeePerGas()
    const maxFeePerGas = 2n * (block.baseFeePerGas ?? 0n) + maxPriorityFeePerGas
    const draft: UserOperationV07 = {
      sender,
      nonce,
      ...(deployed ? {} : accountFactoryData(this.chain.smartAccountFactory, signer.owner)),
      callData: encodeAccountCalls(calls),
      callGasLimit: 0n,
      verificationGasLimit: 0n,
      preVerificationGas: 0n,
      maxFeePerGas,
      maxPriorityFeePerGas,
      signature: signer.owner.kind === "ecdsa" ? DUMMY_ECDSA_SIGNATURE : await dummyWebAuthnSignature(),
      ...(options.sponsored === true
        ? {
            paymaster: this.chain.paymaster,
            paymasterVerificationGasLimit: PAYMASTER_VERIFICATION_GAS,
            paymasterPostOpGasLimit: 0n,
            paymasterData: encodePaymasterData({ validUntil: 2 ** 47, validAfter: 0 }, DUMMY_PAYMASTER_SIGNATURE)
          }
        : {})
    }
    const gas = await this.bundler<Record<string, Hex>>("eth_estimateUserOperationGas", [userOperationToJson(draft), this.chain.entryPoint])
    // The stand-in signatures fail early; a P-256 check costs the precompile and the parsing on top.
    const verificationMargin = signer.owner.kind === "p256" ? 100_000n : 10_000n
    return {
      ...draft,
      callGasLimit: BigInt(gas["callGasLimit"]!),
      verificationGasLimit: BigInt(gas["verificationGasLimit"]!) + verificationMargin,
      preVerificationGas: BigInt(gas["preVerificationGas"]!),
      ...(options.sponsored === true ? { paymasterData: "0x" as Hex } : {}),
      signature: "0x"
    }
  }

  hash(op: UserOperationV07): Hex {
    return userOperationHash(op, this.chain.chainId, this.chain.entryPoint)
  }

  async sign(op: UserOperationV07, signer: AccountSigner): Promise<UserOperationV07> {
    return { ...op, signature: await signer.signUserOperationHash(this.hash(op)) }
  }

  /** eth_sendUserOperation: the userOpHash the bundler accepted. */
  async send(op: UserOperationV07): Promise<Hex> {
    return this.bundler<Hex>("eth_sendUserOperation", [userOperationToJson(op), this.chain.entryPoint])
  }

  /** Polls eth_getUserOperationReceipt until the operation is on chain. */
  async waitForReceipt(
    userOpHash: Hex,
    timeoutMs = 30_000
  ): Promise<{ success: boolean; receipt: { transactionHash: Hex; blockNumber: Hex }; actualGasCost: Hex; paymaster?: Address }> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const receipt = await this.bundler<{
        success: boolean
        receipt: { transactionHash: Hex; blockNumber: Hex }
        actualGasCost: Hex
        paymaster?: Address
      } | null>("eth_getUserOperationReceipt", [userOpHash])
      if (receipt !== null) return receipt
      if (Date.now() > deadline) throw new Error(`user operation ${userOpHash} not included within ${timeoutMs} ms`)
      await new Promise((r) => setTimeout(r, 200))
    }
  }
}

/** A structurally valid WebAuthn signature from a throwaway key (it fails the account's check). */
const dummyWebAuthnSignature = async (): Promise<Hex> => softwarePasskey().assert(`0x${"00".repeat(32)}`).encoded
