/**
 * Sign-In with Ethereum (EIP-4361): the message the server issues, and every check of it that the
 * `siwe` package leaves to its caller.
 *
 * `siwe` does the grammar (building and parsing the message, EIP-55 addresses, nonce syntax); it
 * does NOT compare the domain, URI, chain id or address with anything, nor check the time window
 * or the nonce's freshness (measured: siwe@3.0.0 accepts another chain id, another URI, an
 * issuedAt in the future and a replayed nonce). `checkMessage` does, and its failure names the
 * check. Signatures are verified with viem: ECDSA recovery for accounts, and through the chain's
 * RPC (when one is configured) ERC-1271 for deployed smart accounts and ERC-6492 for
 * counterfactual ones.
 */
import { Either } from "effect"
import { SiweMessage } from "siwe"
import { createPublicClient, getAddress, http, isHex, verifyMessage, type Hex } from "viem"

export const SIWE_STATEMENT = "Sign in to PrediX"

/** Where sign-in happens, from the configured public URL. */
export interface SiweSite {
  /** `host[:port]` of the public URL (the message's domain). */
  readonly domain: string
  /** The public URL's origin (the message's URI). */
  readonly uri: string
  readonly chainId: number
}

export const siteOf = (publicUrl: string, chainId: number): SiweSite => {
  const url = new URL(publicUrl)
  return { domain: url.host, uri: url.origin, chainId }
}

/** The EIP-4361 message for `address` (lowercase or checksummed) with `nonce`, valid from `issuedAt` until `expiresAt` (ms). */
export const buildMessage = (site: SiweSite, address: string, nonce: string, issuedAtMs: number, expiresAtMs: number): string =>
  new SiweMessage({
    domain: site.domain,
    address: getAddress(address),
    statement: SIWE_STATEMENT,
    uri: site.uri,
    version: "1",
    chainId: site.chainId,
    nonce,
    issuedAt: new Date(issuedAtMs).toISOString(),
    expirationTime: new Date(expiresAtMs).toISOString()
  }).prepareMessage()

/** How far an issuedAt may lie ahead of this instance's clock: instances' clocks differ a little. */
export const ISSUED_AT_SKEW_MS = 10_000

/** Our messages are about 400 characters; a client's copy of one is bounded so parsing costs nothing. */
export const MAX_MESSAGE_LENGTH = 4_096

/** `text` as an EIP-4361 message; Left: why it is none. */
export const parseMessage = (text: string): Either.Either<SiweMessage, string> => {
  if (text.length > MAX_MESSAGE_LENGTH) return Either.left(`message malformed: longer than ${MAX_MESSAGE_LENGTH} characters`)
  try {
    return Either.right(new SiweMessage(text))
  } catch (error) {
    return Either.left(
      `message malformed: not an EIP-4361 message (${String(error instanceof Error ? error.message : error).split("\n")[0]})`
    )
  }
}

/** The form of the nonces `issueChallenge` makes (and `auth_nonce` holds): any other is malformed, never looked up. */
export const NONCE_FORM = /^[A-Za-z0-9]{24,64}$/

/**
 * Parses `text` and checks it against this site, the address and nonce the message was issued
 * for, and `nowMs`, in this order: domain, URI, version, chain id, address, nonce, issuedAt,
 * expirationTime, notBefore. Left: the first failed check, in words that name it.
 */
export const checkMessage = (
  text: string,
  expected: { readonly site: SiweSite; readonly address: string; readonly nonce: string },
  nowMs: number
): Either.Either<SiweMessage, string> => {
  const parsed = parseMessage(text)
  if (Either.isLeft(parsed)) return parsed
  const message = parsed.right
  const { site } = expected
  if (message.domain !== site.domain)
    return Either.left(`domain mismatch: the message is for ${message.domain}, this site is ${site.domain}`)
  if (message.uri !== site.uri) return Either.left(`URI mismatch: the message is for ${message.uri}, this site is ${site.uri}`)
  if (message.version !== "1") return Either.left(`version mismatch: expected 1, got ${message.version}`)
  if (message.chainId !== site.chainId)
    return Either.left(`chain id mismatch: the message is for chain ${message.chainId}, this site is chain ${site.chainId}`)
  if (message.address.toLowerCase() !== expected.address)
    return Either.left(`address mismatch: the message is for ${message.address.toLowerCase()}, not ${expected.address}`)
  if (message.nonce !== expected.nonce) return Either.left("nonce mismatch: the message carries another nonce than the one issued")
  const issuedAt = Date.parse(message.issuedAt ?? "")
  if (!Number.isFinite(issuedAt)) return Either.left("issuedAt missing or invalid")
  if (issuedAt > nowMs + ISSUED_AT_SKEW_MS)
    return Either.left(`message issued in the future: issuedAt ${message.issuedAt} is ahead of this server's clock`)
  if (message.expirationTime === undefined) return Either.left("expirationTime missing")
  const expiresAt = Date.parse(message.expirationTime)
  if (!Number.isFinite(expiresAt) || expiresAt <= nowMs) return Either.left(`message expired at ${message.expirationTime}`)
  if (message.notBefore !== undefined && !(Date.parse(message.notBefore) <= nowMs))
    return Either.left(`message not valid before ${message.notBefore}`)
  return Either.right(message)
}

/** The fields of an EIP-4361 message, in the order the message states them. */
const MESSAGE_FIELDS = [
  ["scheme", "scheme"],
  ["domain", "domain"],
  ["address", "address"],
  ["statement", "statement"],
  ["uri", "URI"],
  ["version", "version"],
  ["chainId", "chain id"],
  ["nonce", "nonce"],
  ["issuedAt", "issuedAt"],
  ["expirationTime", "expirationTime"],
  ["notBefore", "notBefore"],
  ["requestId", "requestId"],
  ["resources", "resources"]
] as const satisfies ReadonlyArray<readonly [keyof SiweMessage, string]>

const fieldText = (value: unknown): string =>
  value === undefined ? "(absent)" : Array.isArray(value) ? JSON.stringify(value) : String(value)

/**
 * The first field in which `sent` differs from `issued` (the challenge stored with its nonce), in
 * words naming it and both values; undefined when every field is the issued one. The address is
 * compared as the message writes it (EIP-55), so a changed checksum counts as a change too.
 */
export const differingField = (sent: SiweMessage, issued: SiweMessage): string | undefined => {
  for (const [key, name] of MESSAGE_FIELDS) {
    const a = fieldText(sent[key])
    const b = fieldText(issued[key])
    if (a !== b) return `${name} is ${a}, the challenge's is ${b}`
  }
  return undefined
}

/** 65-byte ECDSA signatures and the longer ERC-1271 / ERC-6492 ones; bounded so a huge body costs nothing. */
export const MAX_SIGNATURE_HEX = 20_000

export const signatureProblem = (signature: string): string | undefined =>
  !isHex(signature, { strict: true }) || signature.length < 4 || signature.length % 2 !== 0
    ? "signature malformed: expected 0x-prefixed hex bytes"
    : signature.length > MAX_SIGNATURE_HEX
      ? `signature malformed: longer than ${MAX_SIGNATURE_HEX} hex characters`
      : undefined

/** "unchecked": the chain's RPC failed, so a smart-account signature could not be checked. */
export type Verdict = "valid" | "invalid" | "unchecked"

export type SignatureVerifier = (address: string, message: string, signature: Hex) => Promise<Verdict>

/**
 * Verifies `signature` over `message` (EIP-191) for `address`: recovery first (an account's
 * signature needs no RPC); then, with an RPC URL, ERC-6492 / ERC-1271 through viem's deployless
 * universal validator.
 */
export const signatureVerifier = (rpcUrl: string | undefined): SignatureVerifier => {
  const client = rpcUrl === undefined ? undefined : createPublicClient({ transport: http(rpcUrl, { retryCount: 1, timeout: 10_000 }) })
  return async (address, message, signature) => {
    const checksummed = getAddress(address)
    if (client === undefined)
      return verifyMessage({ address: checksummed, message, signature }).then(
        (ok) => (ok ? "valid" : "invalid"),
        () => "invalid"
      )
    const ok = await client.verifyMessage({ address: checksummed, message, signature, mode: "eoa" }).catch(() => false)
    if (ok) return "valid"
    // viem reports a node that failed the validator's call as "not valid"; ask the node whether it is there.
    return client.getChainId().then(
      (): Verdict => "invalid",
      (): Verdict => "unchecked"
    )
  }
}
