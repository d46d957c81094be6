/**
 * schema/protocol/aa.ts's encodings without a chain (test/devnet/aa.test.ts checks them against the
 * contracts): what the sponsor policy decodes must be exactly the account's execute/executeBatch,
 * nothing riding along.
 */
import { describe, expect, it } from "vitest"
import { concat, encodeFunctionData, erc20Abi, type Address, type Hex } from "viem"
import {
  decodeAccountCalls,
  decodeOwner,
  decodePaymasterAndData,
  decodeWebAuthnSignature,
  encodeAccountCalls,
  encodeOwner,
  encodePaymasterAndData,
  encodeWebAuthnSignature,
  P256_N,
  smartAccountAbi,
  webAuthnClientData
} from "../../schema/protocol/aa.js"

const token = "0x5fbdb2315678afecb367f032d93f642f64180aa3" as Address
const router = "0x2279b7a0a67db372996a5fab50d91eaa73d2ebe6" as Address
const approve = encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [router, 10n] })

describe("schema/aa", () => {
  it("account calls: one call is execute, several executeBatch, and they decode back", () => {
    const one = [{ target: token, value: 0n, data: approve }]
    const two = [...one, { target: router, value: 1n, data: "0xdeadbeef" as Hex }]
    expect(encodeAccountCalls(one).slice(0, 10)).toBe(
      encodeFunctionData({ abi: smartAccountAbi, functionName: "execute", args: [token, 0n, approve] }).slice(0, 10)
    )
    expect(decodeAccountCalls(encodeAccountCalls(one))).toEqual(one)
    expect(decodeAccountCalls(encodeAccountCalls(two))).toEqual(two)
    // executeBatch of one call is also what the account runs: decoded as such.
    const batchOfOne = encodeFunctionData({ abi: smartAccountAbi, functionName: "executeBatch", args: [one] })
    expect(decodeAccountCalls(batchOfOne)).toEqual(one)
    expect(decodeAccountCalls(encodeFunctionData({ abi: smartAccountAbi, functionName: "executeBatch", args: [[]] }))).toEqual([])
  })

  it("account calls: trailing bytes, another function, or garbage decode to undefined", () => {
    const call = encodeAccountCalls([{ target: token, value: 0n, data: approve }])
    expect(decodeAccountCalls(concat([call, "0x00"]))).toBeUndefined()
    expect(decodeAccountCalls(concat([call, `0x${"00".repeat(32)}`]))).toBeUndefined()
    expect(decodeAccountCalls(approve)).toBeUndefined()
    expect(decodeAccountCalls("0x")).toBeUndefined()
    expect(decodeAccountCalls("0x12345678")).toBeUndefined()
    expect(decodeAccountCalls("not hex" as Hex)).toBeUndefined()
  })

  it("owners: 20 bytes for an EOA, abi.encode(x, y) for a P-256 key; other lengths are no owner", () => {
    const ecdsa = { kind: "ecdsa", address: token } as const
    const p256 = { kind: "p256", x: 1n, y: P256_N - 1n } as const
    expect(encodeOwner(ecdsa)).toBe(token)
    expect(decodeOwner(encodeOwner(ecdsa))).toEqual(ecdsa)
    expect(encodeOwner(p256).length).toBe(2 + 128)
    expect(decodeOwner(encodeOwner(p256))).toEqual(p256)
    expect(decodeOwner("0x1234")).toBeUndefined()
  })

  it("paymasterAndData: the packed layout round-trips; too short or an out-of-range window is undefined", () => {
    const fields = {
      paymaster: router,
      verificationGasLimit: 60_000n,
      postOpGasLimit: 1n,
      window: { validUntil: 1_800_000_000, validAfter: 5 },
      signature: `0x${"11".repeat(65)}` as Hex
    }
    const packed = encodePaymasterAndData(fields)
    expect((packed.length - 2) / 2).toBe(20 + 16 + 16 + 64 + 65)
    expect(decodePaymasterAndData(packed)).toEqual(fields)
    expect(decodePaymasterAndData(packed.slice(0, 2 + 2 * 115) as Hex)).toBeUndefined()
    expect(() => encodePaymasterAndData({ ...fields, window: { validUntil: 2 ** 48, validAfter: 0 } })).toThrow(RangeError)
  })

  it("WebAuthn signatures: the account's encoding round-trips with s made low; clientDataJSON indices point at type and challenge", () => {
    const challenge = `0x${"ab".repeat(32)}` as Hex
    const client = webAuthnClientData(challenge, "http://localhost:3000")
    expect(client.clientDataJSON.startsWith('{"type":"webauthn.get"', client.typeIndex - 1)).toBe(true)
    expect(client.clientDataJSON.slice(client.challengeIndex)).toMatch(/^"challenge":"q6ur/)
    const sig = {
      authenticatorData: `0x${"00".repeat(37)}` as Hex,
      clientDataJSON: client.clientDataJSON,
      challengeIndex: client.challengeIndex,
      typeIndex: client.typeIndex,
      r: 5n,
      s: P256_N - 7n
    }
    expect(decodeWebAuthnSignature(encodeWebAuthnSignature(sig))).toEqual({ ...sig, s: 7n })
    expect(decodeWebAuthnSignature("0x1234")).toBeUndefined()
  })
})
