/**
 * Configuration of the account-abstraction endpoints (issue 18): the chain's ERC-4337 contracts,
 * the bundler, the paymaster's signer and policy caps, and the WebAuthn relying party. Without
 * it the /api/aa endpoints answer INDEXER_UNAVAILABLE 503 naming what is missing.
 */
import type { Effect, Redacted } from "effect"
import type { Address, Hex } from "viem"

/** The protocol's contracts a sponsored operation may call (from the deployment). */
export interface ProtocolContracts {
  readonly router: Address
  readonly diamond: Address
  readonly exchange: Address
  /** The collateral (test USDC on the devnet). */
  readonly usdc: Address
  readonly permit2: Address
}

/** Gas caps and budget of the sponsorship policy; amounts in gas units or wei. */
export interface SponsorCaps {
  readonly maxCallGas: bigint
  readonly maxVerificationGas: bigint
  readonly maxPreVerificationGas: bigint
  readonly maxFeePerGas: bigint
  /** What one smart account may be sponsored for per UTC day, in wei of the operations' maximum cost. */
  readonly dailyBudgetWei: bigint
  /** Seconds a sponsorship stays valid (validUntil - validAfter); at most 600. */
  readonly validitySeconds: number
  /** The paymaster's own gas limits, written into paymasterAndData (and signed). */
  readonly paymasterVerificationGas: bigint
  readonly paymasterPostOpGas: bigint
}

export const DEFAULT_SPONSOR_CAPS: SponsorCaps = {
  maxCallGas: 2_000_000n,
  maxVerificationGas: 2_000_000n,
  maxPreVerificationGas: 500_000n,
  maxFeePerGas: 100n * 10n ** 9n,
  dailyBudgetWei: 5n * 10n ** 16n,
  validitySeconds: 600,
  paymasterVerificationGas: 100_000n,
  paymasterPostOpGas: 0n
}

/** The longest validity window a sponsorship may have (issue 18). */
export const MAX_VALIDITY_SECONDS = 600

export interface WebAuthnOptions {
  /** The relying party id: the app's host name (default: PUBLIC_URL's host). */
  readonly rpId: string
  readonly rpName: string
  /** Origins assertions may come from (default: PUBLIC_URL's origin). */
  readonly origins: ReadonlyArray<string>
}

export interface AaOptions {
  readonly rpcUrl: string
  readonly chainId: number
  readonly entryPoint: Address
  /** The passkey (WebAuthn P-256) accounts' factory: getAddress(bytes owner, uint256 salt), salt 0. */
  readonly accountFactory: Address
  /**
   * The ECDSA accounts' factory: the canonical SimpleAccountFactory v0.7,
   * getAddress(address owner, uint256 salt) / createAccount(address owner, uint256 salt), salt 0.
   */
  readonly ecdsaAccountFactory: Address
  readonly paymaster: Address
  /** PAYMASTER_SIGNER_KEY: never logged. */
  readonly paymasterSignerKey: Redacted.Redacted<Hex>
  /** BUNDLER_URL: the ERC-4337 bundler /api/aa/bundler forwards to (or an effect that waits until it listens). */
  readonly bundlerUrl: string | Effect.Effect<string, { readonly message: string }>
  readonly protocol: ProtocolContracts
  /** Default: `DEFAULT_SPONSOR_CAPS`. */
  readonly caps?: Partial<SponsorCaps>
  /** Default: the relying party of PUBLIC_URL. */
  readonly webauthn?: Partial<WebAuthnOptions>
}

/** The relying party of a public URL: its host name and origin. */
export const webauthnOf = (publicUrl: string, given: Partial<WebAuthnOptions> = {}): WebAuthnOptions => {
  const url = new URL(publicUrl)
  return { rpId: given.rpId ?? url.hostname, rpName: given.rpName ?? "PrediX", origins: given.origins ?? [url.origin] }
}

export const capsOf = (given: Partial<SponsorCaps> = {}): SponsorCaps => {
  const caps = { ...DEFAULT_SPONSOR_CAPS, ...given }
  if (!(caps.validitySeconds > 0 && caps.validitySeconds <= MAX_VALIDITY_SECONDS)) {
    throw new Error(`sponsorship validity ${caps.validitySeconds} s: must be 1..${MAX_VALIDITY_SECONDS}`)
  }
  return caps
}
