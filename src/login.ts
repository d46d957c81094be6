/**
 * Signs in to a backend with a private key (SIWE: challenge, personal_sign, verify) and prints
 * the session cookie, for curl and scripts:
 *
 *   npm run login -- --key 0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80
 *   npm run login -- --key 0x... --url http://127.0.0.1:3000 --quiet   # the cookie alone
 *
 * The key defaults to PRIVATE_KEY; it is used to sign and never printed.
 */
import { privateKeyToAccount } from "viem/accounts"

const argument = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`)
  return i < 0 ? undefined : process.argv[i + 1]
}

const fail = (message: string): never => {
  process.stderr.write(`login: ${message}\n`)
  process.exit(1)
}

const key = argument("key") ?? process.env["PRIVATE_KEY"] ?? fail("give --key 0x<64 hex> (or PRIVATE_KEY)")
if (!/^0x[0-9a-fA-F]{64}$/.test(key)) fail("the key must be 0x followed by 64 hex digits")
const base = (argument("url") ?? `http://127.0.0.1:${process.env["BACKEND_PORT"] ?? "3000"}`).replace(/\/$/, "")
const quiet = process.argv.includes("--quiet")
const account = privateKeyToAccount(key as `0x${string}`)

const request = async (path: string, init?: RequestInit) => {
  const response = await fetch(`${base}${path}`, init).catch((error: unknown) => fail(`${base} does not answer: ${String(error)}`))
  const body = (await response.json().catch(() => undefined)) as { data?: any; code?: string; message?: string } | undefined
  if (!response.ok) fail(`${path}: ${response.status} ${body?.code ?? ""} ${body?.message ?? ""}`.trim())
  return { response, data: body?.data }
}

const challenge = await request(`/api/auth/challenge?address=${account.address}`)
const signature = await account.signMessage({ message: challenge.data.message as string })
const verify = await request("/api/auth/verify", {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ address: account.address, signature, nonce: challenge.data.nonce })
})
const cookie =
  verify.response.headers
    .getSetCookie()
    .find((c) => c.startsWith("predix_session="))
    ?.split(";")[0] ?? fail("no session cookie in the answer")
if (quiet) {
  process.stdout.write(`${cookie}\n`)
} else {
  process.stdout.write(
    `signed in as ${verify.data.address} (${verify.data.role}) until ${new Date(verify.data.expiresAt * 1000).toISOString()}\n` +
      `${cookie}\n\ncurl -s ${base}/api/auth/me -H 'cookie: ${cookie}'\n`
  )
}
