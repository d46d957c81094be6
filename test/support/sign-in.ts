/**
 * SIWE sign-in over HTTP against a running backend, as a wallet does it: ask for the challenge,
 * sign its message with `key`, verify. Used by the tests that drive a whole `predix start`.
 *
 * Those tests poll the public API from the same address before signing in, and the spec's
 * per-address limits (60 public requests a minute) count the polls: a refusal (429) is waited out
 * as a client does, for its Retry-After, and the sign-in started again (a challenge is single use).
 */
import { expect } from "vitest"
import { privateKeyToAccount } from "viem/accounts"

const waitOut = (refused: Response) =>
  new Promise((resolve) => setTimeout(resolve, (Math.min(Number(refused.headers.get("retry-after") ?? 1), 61) + 0.2) * 1000))

/** Signs in with `key` against the backend at `base`; the session cookie (`name=value`). */
export const signInAt = async (base: string, key: `0x${string}`): Promise<string> => {
  const account = privateKeyToAccount(key)
  for (let attempt = 1; ; attempt++) {
    const asked = await fetch(`${base}/api/auth/challenge?address=${account.address}`)
    if (asked.status === 429 && attempt < 3) {
      await waitOut(asked)
      continue
    }
    expect(asked.status).toBe(200)
    const challenge = (await asked.json()) as { data: { message: string; nonce: string } }
    const signature = await account.signMessage({ message: challenge.data.message })
    const verified = await fetch(`${base}/api/auth/verify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ address: account.address, signature, nonce: challenge.data.nonce })
    })
    if (verified.status === 429 && attempt < 3) {
      await waitOut(verified)
      continue
    }
    expect(verified.status).toBe(200)
    return verified.headers.get("set-cookie")!.split(";")[0]!
  }
}
