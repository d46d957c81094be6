/**
 * SIWE sign-in over HTTP against a running backend, as a wallet does it: ask for the challenge,
 * sign its message with `key`, verify. Used by the tests that drive a whole `predix start`.
 */
import { expect } from "vitest"
import { privateKeyToAccount } from "viem/accounts"

/** Signs in with `key` against the backend at `base`; the session cookie (`name=value`). */
export const signInAt = async (base: string, key: `0x${string}`): Promise<string> => {
  const account = privateKeyToAccount(key)
  const challenge = (await (await fetch(`${base}/api/auth/challenge?address=${account.address}`)).json()) as {
    data: { message: string; nonce: string }
  }
  const signature = await account.signMessage({ message: challenge.data.message })
  const verified = await fetch(`${base}/api/auth/verify`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ address: account.address, signature, nonce: challenge.data.nonce })
  })
  expect(verified.status).toBe(200)
  return verified.headers.get("set-cookie")!.split(";")[0]!
}
