/**
 * A software passkey: a P-256 key in the test that answers WebAuthn ceremonies the way an
 * authenticator and browser do (attestation "none", ES256), producing the RegistrationResponseJSON
 * and AuthenticationResponseJSON the backend verifies with @simplewebauthn/server. Origin, RP id,
 * counter and challenge are parameters, so tests can present wrong ones.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto"

const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest()

/** The CBOR this needs (RFC 8949): unsigned and negative integers, byte and text strings, maps. */
export const cbor = (value: unknown): Buffer => {
  const head = (major: number, length: number): Buffer => {
    if (length < 24) return Buffer.from([(major << 5) | length])
    if (length < 256) return Buffer.from([(major << 5) | 24, length])
    if (length < 65536) return Buffer.from([(major << 5) | 25, length >> 8, length & 255])
    throw new Error("too long")
  }
  if (typeof value === "number") return value >= 0 ? head(0, value) : head(1, -1 - value)
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), Buffer.from(value)])
  if (typeof value === "string") {
    const bytes = Buffer.from(value, "utf8")
    return Buffer.concat([head(3, bytes.length), bytes])
  }
  if (value instanceof Map) {
    const parts = [head(5, value.size)]
    for (const [k, v] of value) parts.push(cbor(k), cbor(v))
    return Buffer.concat(parts)
  }
  throw new Error(`cbor: unsupported ${typeof value}`)
}

export interface Ceremony {
  readonly challenge: string
  readonly rpId: string
  readonly origin: string
}

export class SoftwarePasskey {
  readonly privateKey: KeyObject
  readonly x: bigint
  readonly y: bigint
  readonly credentialId = randomBytes(16)
  /** The signature counter the next assertion carries (authenticators without one always send 0). */
  counter = 0

  constructor() {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
    this.privateKey = privateKey
    const jwk = publicKey.export({ format: "jwk" })
    this.x = BigInt(`0x${Buffer.from(jwk.x!, "base64url").toString("hex")}`)
    this.y = BigInt(`0x${Buffer.from(jwk.y!, "base64url").toString("hex")}`)
  }

  get id() {
    return this.credentialId.toString("base64url")
  }

  private coseKey() {
    const coordinate = (v: bigint) => Buffer.from(v.toString(16).padStart(64, "0"), "hex")
    return cbor(
      new Map<number, unknown>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, coordinate(this.x)],
        [-3, coordinate(this.y)]
      ])
    )
  }

  private clientData(type: string, ceremony: Ceremony) {
    return Buffer.from(JSON.stringify({ type, challenge: ceremony.challenge, origin: ceremony.origin, crossOrigin: false }))
  }

  private static counterBytes(counter: number) {
    const bytes = Buffer.alloc(4)
    bytes.writeUInt32BE(counter)
    return bytes
  }

  /** navigator.credentials.create's answer, as @simplewebauthn/browser's startRegistration returns it. */
  register(ceremony: Ceremony) {
    const idLength = Buffer.alloc(2)
    idLength.writeUInt16BE(this.credentialId.length)
    // flags: user present (0x01), user verified (0x04), attested credential data (0x40)
    const authData = Buffer.concat([
      sha256(ceremony.rpId),
      Buffer.from([0x45]),
      SoftwarePasskey.counterBytes(this.counter),
      Buffer.alloc(16),
      idLength,
      this.credentialId,
      this.coseKey()
    ])
    const attestationObject = cbor(
      new Map<string, unknown>([
        ["fmt", "none"],
        ["attStmt", new Map()],
        ["authData", authData]
      ])
    )
    return {
      id: this.id,
      rawId: this.id,
      type: "public-key" as const,
      response: {
        clientDataJSON: this.clientData("webauthn.create", ceremony).toString("base64url"),
        attestationObject: attestationObject.toString("base64url"),
        transports: ["internal", "hybrid"]
      },
      clientExtensionResults: {}
    }
  }

  /** navigator.credentials.get's answer: signs authenticatorData || sha256(clientDataJSON) with the key (DER). */
  assert(ceremony: Ceremony, options: { readonly counter?: number } = {}) {
    const authenticatorData = Buffer.concat([
      sha256(ceremony.rpId),
      Buffer.from([0x05]),
      SoftwarePasskey.counterBytes(options.counter ?? this.counter)
    ])
    const clientDataJSON = this.clientData("webauthn.get", ceremony)
    const signature = sign("sha256", Buffer.concat([authenticatorData, sha256(clientDataJSON)]), this.privateKey)
    return {
      id: this.id,
      rawId: this.id,
      type: "public-key" as const,
      response: {
        clientDataJSON: clientDataJSON.toString("base64url"),
        authenticatorData: authenticatorData.toString("base64url"),
        signature: signature.toString("base64url")
      },
      clientExtensionResults: {}
    }
  }
}
