/**
 * Account abstraction (ERC-4337 v0.7) as the devnet's contracts define it (tools/devnet/contracts/Aa.sol):
 * the smart account's owner encodings and calls, the user-operation hash, the verifying
 * paymaster's signed hash and `paymasterAndData`, and the WebAuthn signature encoding. Pure:
 * encoding, decoding and hashing only; the chain side is in tools/devnet, the HTTP side in http/.
 *
 * Invariants:
 * - `paymasterHash` is the TypeScript twin of `VerifyingPaymaster.getHash` (a test compares the
 *   two on chain): whatever changes one changes both;
 * - decoders answer `undefined` for anything that is not exactly the encoding, never throw.
 */
import {
  concat,
  decodeAbiParameters,
  decodeFunctionData,
  encodeAbiParameters,
  encodeFunctionData,
  hexToBigInt,
  keccak256,
  numberToHex,
  parseAbi,
  size,
  slice,
  toFunctionSelector,
  type Address,
  type Hex
} from "viem"
import { getUserOperationHash, toPackedUserOperation, type UserOperation } from "viem/account-abstraction"

/** The canonical EntryPoint v0.7 (the same on every chain, the devnet's included). */
export const ENTRY_POINT_V07 = "0x0000000071727de22e5e9d8baf0edac6f37da032" as Address
/**
 * The canonical SimpleAccountFactory v0.7 (eth-infinitism, @account-abstraction/contracts 0.7.0):
 * ECDSA accounts, where permissionless `toSimpleSmartAccount` looks by default.
 */
export const SIMPLE_ACCOUNT_FACTORY_V07 = "0x91e60e0613810449d098b0b5ec8b51a0fe8c8985" as Address
/** The factory salt the backend uses for every owner's account. */
export const DEFAULT_ACCOUNT_SALT = 0n
/** validationData's failed-signature value: a bad signature is this, never a revert. */
export const SIG_VALIDATION_FAILED = 1n
/** The longest validity window the paymaster policy signs (seconds). */
export const MAX_SPONSOR_WINDOW_SECONDS = 600
/** P-256 group order; WebAuthn signatures on chain must have s <= n/2. */
export const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n

/** A user operation of EntryPoint v0.7 in its unpacked (bundler RPC) form. */
export type UserOperationV07 = UserOperation<"0.7">
export type PackedUserOperation = ReturnType<typeof toPackedUserOperation>

// ---------------------------------------------------------------------------------------------
// Owners

/** Who owns an account: an EOA (ECDSA) or a WebAuthn P-256 public key. */
export type AccountOwner =
  { readonly kind: "ecdsa"; readonly address: Address } | { readonly kind: "p256"; readonly x: bigint; readonly y: bigint }

/** The factory's `owner` bytes: 20 bytes for an EOA, abi.encode(x, y) (64 bytes) for a P-256 key. */
export const encodeOwner = (owner: AccountOwner): Hex =>
  owner.kind === "ecdsa"
    ? (owner.address.toLowerCase() as Hex)
    : encodeAbiParameters([{ type: "uint256" }, { type: "uint256" }], [owner.x, owner.y])

export const decodeOwner = (bytes: Hex): AccountOwner | undefined => {
  if (!/^0x[0-9a-fA-F]*$/.test(bytes)) return undefined
  if (size(bytes) === 20) return { kind: "ecdsa", address: bytes.toLowerCase() as Address }
  if (size(bytes) === 64) return { kind: "p256", x: hexToBigInt(slice(bytes, 0, 32)), y: hexToBigInt(slice(bytes, 32, 64)) }
  return undefined
}

// ---------------------------------------------------------------------------------------------
// ABIs

export const smartAccountFactoryAbi = parseAbi([
  "function createAccount(bytes owner, uint256 salt) returns (address)",
  "function getAddress(bytes owner, uint256 salt) view returns (address)",
  "function entryPoint() view returns (address)",
  "event AccountCreated(address indexed account, bytes owner, uint256 salt)"
])

export const smartAccountAbi = parseAbi([
  "struct Call { address target; uint256 value; bytes data; }",
  "function execute(address target, uint256 value, bytes data)",
  "function executeBatch(Call[] calls)",
  "function owner() view returns (bytes)",
  "function entryPoint() view returns (address)",
  "function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)",
  "error OnlyEntryPoint()",
  "error BadOwnerEncoding()"
])

/** The canonical SimpleAccountFactory v0.7 (ECDSA accounts; `owner` is the EOA). */
export const simpleAccountFactoryAbi = parseAbi([
  "function createAccount(address owner, uint256 salt) returns (address)",
  "function getAddress(address owner, uint256 salt) view returns (address)",
  "function accountImplementation() view returns (address)"
])

/**
 * SimpleAccount v0.7: `execute` is the project account's (same selector); `executeBatch` takes
 * three arrays (values may be empty: then every call sends 0).
 */
export const simpleAccountAbi = parseAbi([
  "function execute(address dest, uint256 value, bytes func)",
  "function executeBatch(address[] dest, uint256[] value, bytes[] func)",
  "function owner() view returns (address)",
  "function entryPoint() view returns (address)"
])

export const verifyingPaymasterAbi = parseAbi([
  "struct PackedUserOperation { address sender; uint256 nonce; bytes initCode; bytes callData; bytes32 accountGasLimits; uint256 preVerificationGas; bytes32 gasFees; bytes paymasterAndData; bytes signature; }",
  "function getHash(PackedUserOperation userOp, uint48 validUntil, uint48 validAfter) view returns (bytes32)",
  "function verifyingSigner() view returns (address)",
  "function owner() view returns (address)",
  "function paused() view returns (bool)",
  "function setSigner(address signer)",
  "function pause()",
  "function unpause()",
  "function deposit() payable",
  "function getDeposit() view returns (uint256)",
  "function addStake(uint32 unstakeDelaySec) payable",
  "event SignerChanged(address indexed previousSigner, address indexed newSigner)",
  "event Paused(address account)",
  "event Unpaused(address account)",
  "error OnlyEntryPoint()",
  "error OnlyOwner()",
  "error PaymasterPaused()",
  "error MalformedPaymasterData(uint256 length)"
])

export { entryPoint07Abi as entryPointAbi } from "viem/account-abstraction"

// ---------------------------------------------------------------------------------------------
// Account calls

export interface AccountCall {
  readonly target: Address
  readonly value: bigint
  readonly data: Hex
}

/** One call as `execute`, several as `executeBatch`. */
export const encodeAccountCalls = (calls: ReadonlyArray<AccountCall>): Hex => {
  if (calls.length === 1) {
    const [call] = calls as [AccountCall]
    return encodeFunctionData({ abi: smartAccountAbi, functionName: "execute", args: [call.target, call.value, call.data] })
  }
  return encodeBatch(calls)
}

const encodeBatch = (calls: ReadonlyArray<AccountCall>): Hex =>
  encodeFunctionData({
    abi: smartAccountAbi,
    functionName: "executeBatch",
    args: [calls.map((c) => ({ target: c.target, value: c.value, data: c.data }))]
  })

const EXECUTE_SELECTOR = toFunctionSelector("function execute(address target, uint256 value, bytes data)")
const SIMPLE_BATCH_SELECTOR = toFunctionSelector("function executeBatch(address[] dest, uint256[] value, bytes[] func)")

/** SimpleAccount v0.7's `executeBatch(dest[], value[], func[])` (values in full, as permissionless sends them). */
export const encodeSimpleAccountBatch = (calls: ReadonlyArray<AccountCall>): Hex =>
  encodeFunctionData({
    abi: simpleAccountAbi,
    functionName: "executeBatch",
    args: [calls.map((c) => c.target), calls.map((c) => c.value), calls.map((c) => c.data)]
  })

/** SimpleAccount's batch as calls: `undefined` unless the values are empty or one per call (else the account reverts). */
const decodeSimpleBatch = (callData: Hex): ReadonlyArray<AccountCall> | undefined => {
  const decoded = decodeFunctionData({ abi: simpleAccountAbi, data: callData })
  if (decoded.functionName !== "executeBatch") return undefined
  const [targets, values, datas] = decoded.args
  if (datas.length !== targets.length || (values.length !== 0 && values.length !== targets.length)) return undefined
  const calls = targets.map((target, i) => ({ target, value: values.length === 0 ? 0n : values[i]!, data: datas[i]! }))
  // Re-encoding the same arrays must give the same bytes, so no trailing data rides along.
  const canonical = encodeFunctionData({ abi: simpleAccountAbi, functionName: "executeBatch", args: [targets, values, datas] })
  return canonical.toLowerCase() === callData.toLowerCase() ? calls : undefined
}

/**
 * The calls an account's `callData` makes: `execute` (both accounts), the project account's
 * `executeBatch(Call[])` or SimpleAccount's `executeBatch(address[], uint256[], bytes[])`,
 * exactly (re-encoding gives the same bytes, so no trailing data rides along); `undefined` for
 * anything else.
 */
export const decodeAccountCalls = (callData: Hex): ReadonlyArray<AccountCall> | undefined => {
  let calls: ReadonlyArray<AccountCall> | undefined
  try {
    if (callData.slice(0, 10).toLowerCase() === SIMPLE_BATCH_SELECTOR) calls = decodeSimpleBatch(callData)
    else {
      const decoded = decodeFunctionData({ abi: smartAccountAbi, data: callData })
      if (decoded.functionName === "execute") calls = [{ target: decoded.args[0], value: decoded.args[1], data: decoded.args[2] }]
      else if (decoded.functionName === "executeBatch") calls = decoded.args[0]
      else return undefined
      // execute with one call, executeBatch with any other number: re-encoding must give the same bytes.
      const canonical =
        calls.length === 1 && callData.slice(0, 10).toLowerCase() === EXECUTE_SELECTOR ? encodeAccountCalls(calls) : encodeBatch(calls)
      if (canonical.toLowerCase() !== callData.toLowerCase()) return undefined
    }
  } catch {
    return undefined
  }
  if (calls === undefined) return undefined
  return calls.map((c) => ({ target: c.target.toLowerCase() as Address, value: c.value, data: c.data.toLowerCase() as Hex }))
}

// ---------------------------------------------------------------------------------------------
// User operations

/** The factory call that deploys a project (passkey) account: the user operation's `factory` + `factoryData`. */
export const accountFactoryData = (
  factory: Address,
  owner: AccountOwner,
  salt = DEFAULT_ACCOUNT_SALT
): { readonly factory: Address; readonly factoryData: Hex } => ({
  factory,
  factoryData: encodeFunctionData({ abi: smartAccountFactoryAbi, functionName: "createAccount", args: [encodeOwner(owner), salt] })
})

/** SimpleAccountFactory v0.7's call that deploys an EOA's SimpleAccount (what permissionless puts in the initCode). */
export const simpleAccountFactoryData = (
  factory: Address,
  owner: Address,
  salt = DEFAULT_ACCOUNT_SALT
): { readonly factory: Address; readonly factoryData: Hex } => ({
  factory,
  factoryData: encodeFunctionData({ abi: simpleAccountFactoryAbi, functionName: "createAccount", args: [owner, salt] })
})

/** The EntryPoint v0.7 packed form (what `handleOps` and the paymaster's `getHash` take). */
export const packUserOperation = (op: UserOperationV07): PackedUserOperation => toPackedUserOperation(op)

/** userOpHash = keccak256(abi.encode(keccak256(pack(op without signature)), entryPoint, chainId)). */
export const userOperationHash = (op: UserOperationV07, chainId: number, entryPoint: Address = ENTRY_POINT_V07): Hex =>
  getUserOperationHash({ chainId, entryPointAddress: entryPoint, entryPointVersion: "0.7", userOperation: op })

// ---------------------------------------------------------------------------------------------
// Verifying paymaster

export interface PaymasterWindow {
  /** Unix seconds after which the sponsorship is void (never 0, which the EntryPoint reads as "forever"). */
  readonly validUntil: number
  readonly validAfter: number
}

const uint48 = (value: number, what: string) => {
  if (!Number.isSafeInteger(value) || value < 0 || value >= 2 ** 48) throw new RangeError(`${what} is not a uint48: ${value}`)
  return value
}

/** `paymasterData` (what follows paymaster | verificationGasLimit | postOpGasLimit): abi.encode(validUntil, validAfter) | signature. */
export const encodePaymasterData = (window: PaymasterWindow, signature: Hex): Hex =>
  concat([
    encodeAbiParameters(
      [{ type: "uint48" }, { type: "uint48" }],
      [uint48(window.validUntil, "validUntil"), uint48(window.validAfter, "validAfter")]
    ),
    signature
  ])

/** The whole packed `paymasterAndData`: paymaster(20) | verificationGasLimit(16) | postOpGasLimit(16) | window(64) | signature(65). */
export const encodePaymasterAndData = (fields: {
  readonly paymaster: Address
  readonly verificationGasLimit: bigint
  readonly postOpGasLimit: bigint
  readonly window: PaymasterWindow
  readonly signature: Hex
}): Hex =>
  concat([
    fields.paymaster,
    numberToHex(fields.verificationGasLimit, { size: 16 }),
    numberToHex(fields.postOpGasLimit, { size: 16 }),
    encodePaymasterData(fields.window, fields.signature)
  ])

export interface DecodedPaymasterAndData {
  readonly paymaster: Address
  readonly verificationGasLimit: bigint
  readonly postOpGasLimit: bigint
  readonly window: PaymasterWindow
  readonly signature: Hex
}

export const decodePaymasterAndData = (data: Hex): DecodedPaymasterAndData | undefined => {
  if (!/^0x[0-9a-fA-F]*$/.test(data) || size(data) < 116) return undefined
  const validUntil = hexToBigInt(slice(data, 52, 84))
  const validAfter = hexToBigInt(slice(data, 84, 116))
  if (validUntil >= 2n ** 48n || validAfter >= 2n ** 48n) return undefined
  return {
    paymaster: slice(data, 0, 20).toLowerCase() as Address,
    verificationGasLimit: hexToBigInt(slice(data, 20, 36)),
    postOpGasLimit: hexToBigInt(slice(data, 36, 52)),
    window: { validUntil: Number(validUntil), validAfter: Number(validAfter) },
    signature: size(data) === 116 ? "0x" : slice(data, 116)
  }
}

/**
 * `VerifyingPaymaster.getHash` in TypeScript: keccak256(abi.encode(sender, nonce, keccak256(initCode),
 * keccak256(callData), accountGasLimits, uint256(paymasterAndData[20:52]), preVerificationGas,
 * gasFees, chainId, paymaster, validUntil, validAfter)). The signer signs its EIP-191 hash
 * (viem: `signMessage({ message: { raw: hash } })`). Only the operation's paymaster gas limits
 * enter it, so the signature can be appended after hashing.
 */
export const paymasterHash = (op: UserOperationV07, chainId: number, paymaster: Address, window: PaymasterWindow): Hex => {
  const packed = packUserOperation({ ...op, paymaster, paymasterData: "0x", signature: "0x" })
  const gasLimits = hexToBigInt(slice(packed.paymasterAndData, 20, 52))
  return keccak256(
    encodeAbiParameters(
      [
        { type: "address" },
        { type: "uint256" },
        { type: "bytes32" },
        { type: "bytes32" },
        { type: "bytes32" },
        { type: "uint256" },
        { type: "uint256" },
        { type: "bytes32" },
        { type: "uint256" },
        { type: "address" },
        { type: "uint48" },
        { type: "uint48" }
      ],
      [
        packed.sender,
        packed.nonce,
        keccak256(packed.initCode),
        keccak256(packed.callData),
        packed.accountGasLimits,
        gasLimits,
        packed.preVerificationGas,
        packed.gasFees,
        BigInt(chainId),
        paymaster,
        uint48(window.validUntil, "validUntil"),
        uint48(window.validAfter, "validAfter")
      ]
    )
  )
}

// ---------------------------------------------------------------------------------------------
// WebAuthn signatures

/** A WebAuthn assertion as the account checks it. */
export interface WebAuthnSignature {
  readonly authenticatorData: Hex
  readonly clientDataJSON: string
  /** Where `"challenge":"..."` starts in clientDataJSON. */
  readonly challengeIndex: number
  /** Where `"type":"webauthn.get"` starts in clientDataJSON. */
  readonly typeIndex: number
  readonly r: bigint
  readonly s: bigint
}

const WEBAUTHN_SIGNATURE = [
  { type: "bytes" },
  { type: "string" },
  { type: "uint256" },
  { type: "uint256" },
  { type: "uint256" },
  { type: "uint256" }
] as const

/** `userOp.signature` (and ERC-1271 signature) of a P-256 account; s is taken low (s <= n/2) as the account requires. */
export const encodeWebAuthnSignature = (sig: WebAuthnSignature): Hex =>
  encodeAbiParameters(WEBAUTHN_SIGNATURE, [
    sig.authenticatorData,
    sig.clientDataJSON,
    BigInt(sig.challengeIndex),
    BigInt(sig.typeIndex),
    sig.r,
    sig.s > P256_N / 2n ? P256_N - sig.s : sig.s
  ])

export const decodeWebAuthnSignature = (signature: Hex): WebAuthnSignature | undefined => {
  try {
    const [authenticatorData, clientDataJSON, challengeIndex, typeIndex, r, s] = decodeAbiParameters(WEBAUTHN_SIGNATURE, signature)
    if (challengeIndex > BigInt(clientDataJSON.length) || typeIndex > BigInt(clientDataJSON.length)) return undefined
    return { authenticatorData, clientDataJSON, challengeIndex: Number(challengeIndex), typeIndex: Number(typeIndex), r, s }
  } catch {
    return undefined
  }
}

/** base64url (no padding) of bytes: the WebAuthn challenge encoding. */
export const base64Url = (bytes: Hex | Uint8Array): string => {
  const raw = typeof bytes === "string" ? Buffer.from(bytes.slice(2), "hex") : Buffer.from(bytes)
  return raw.toString("base64url")
}

/** The clientDataJSON the account accepts for `challenge` (a 32-byte hash), and the indices it needs. */
export const webAuthnClientData = (challenge: Hex, origin: string, crossOrigin = false) => {
  const clientDataJSON = JSON.stringify({ type: "webauthn.get", challenge: base64Url(challenge), origin, crossOrigin })
  return { clientDataJSON, typeIndex: clientDataJSON.indexOf('"type":'), challengeIndex: clientDataJSON.indexOf('"challenge":') }
}
