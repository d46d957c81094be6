/**
 * GET /api/faucet/status over real claim rows (`faucet/repository.ts`): found by the paid
 * address or by its owner, times in whole unix seconds (a claim's sub-second part is dropped,
 * never rounded up), and the answer in the backend envelope the document describes. No chain:
 * the status is the database's alone (claims themselves: test/devnet/faucet-*.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startHarness, type Harness } from "./support/harness.js"

const PAID = "0x1111111111111111111111111111111111111111"
const OWNER = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8"
const PENDING = "0x2222222222222222222222222222222222222222"
const HASH = `0x${"ab".repeat(32)}`

let h: Harness

beforeAll(async () => {
  h = await startHarness()
  await h.sql(
    `insert into faucet_claim (address, owner, signer, nonce, raw_tx, tx_hash, usdc_raw, eth_raw, status, claimed_at, confirmed_at) values
      ($1, $2, '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc', 3, '0xabcd', $3, 10000000000, 1000000000000000000, 'confirmed',
       '2026-01-02 03:04:05.999999+00', '2026-01-02 03:04:07+00'),
      ($4, '0x90f79bf6eb2c4f870365e785982e1f101e93b906', null, null, null, null, 10000000000, 1000000000000000000, 'claimed',
       '2026-01-03 03:04:05+00', null)`,
    [PAID, OWNER, HASH, PENDING]
  )
})

afterAll(async () => {
  await h?.close()
})

describe("GET /api/faucet/status", () => {
  it("a confirmed claim, by its address and by its owner: whole seconds, the transaction, never again", async () => {
    const expected = {
      claimed: true,
      claimedAddress: PAID,
      claimedAt: Date.UTC(2026, 0, 2, 3, 4, 5) / 1000,
      txHash: HASH,
      confirmed: true,
      nextClaimAt: 253_402_300_799
    }
    const byAddress = await h.get(`/api/faucet/status?address=${PAID}`)
    expect(byAddress.status, "by the paid address").toBe(200)
    expect(byAddress.body.data, "by the paid address").toEqual({ address: PAID, ...expected })
    expect(byAddress.body.meta, "the backend envelope").toMatchObject({ version: "v2" })
    const byOwner = await h.get(`/api/faucet/status?address=${OWNER.toUpperCase().replace("0X", "0x")}`)
    expect(byOwner.body.data, "by the owner, any case").toEqual({ address: OWNER, ...expected })
  })

  it("a claim not yet signed: claimed, no transaction, not confirmed", async () => {
    const answer = await h.get(`/api/faucet/status?address=${PENDING}`)
    expect(answer.body.data).toEqual({
      address: PENDING,
      claimed: true,
      claimedAddress: PENDING,
      claimedAt: Date.UTC(2026, 0, 3, 3, 4, 5) / 1000,
      txHash: null,
      confirmed: false,
      nextClaimAt: 253_402_300_799
    })
  })

  it("an address without a claim may claim now", async () => {
    const address = "0x0000000000000000000000000000000000000001"
    const answer = await h.get(`/api/faucet/status?address=${address}`)
    expect(answer.body.data).toEqual({
      address,
      claimed: false,
      claimedAddress: null,
      claimedAt: null,
      txHash: null,
      confirmed: false,
      nextClaimAt: 0
    })
  })
})
