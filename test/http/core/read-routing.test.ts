/**
 * Which backend requests may be answered from a read replica (`http/core/read-routing.ts`): the
 * read-model GETs only. Everything that writes, or reads the backend's own tables (sessions,
 * comments, notifications, points and referrals, claims, accounts, health), must stay on the
 * primary, where a write and the read after it meet. Pure: no database.
 */
import { describe, expect, it } from "vitest"
import { isBackendReadModelRequest } from "../../../http/core/read-routing.js"

const MARKET = "0x0000000000000000000000000000000000000000000000000000000000000007"
const USER = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8"

describe("backend read routing", () => {
  it("sends the read model's GETs to a replica", () => {
    for (const url of [
      "/api/markets",
      "/api/markets?limit=5&sortBy=volume",
      "/api/markets/hot",
      "/api/markets/resolve?slug=x",
      `/api/markets/${MARKET}`,
      `/api/markets/${MARKET}/candles?interval=1h`,
      `/api/markets/${MARKET}/orderbook`,
      `/api/markets/${MARKET}/outcomes/yes`,
      `/api/markets/${MARKET}/prices`,
      `/api/markets/${MARKET}/trades?limit=10`,
      `/api/markets/${MARKET}/pricing/view`,
      "/api/events",
      "/api/events/some-event",
      `/api/trades/0x${"ab".repeat(32)}/breakdown`,
      `/api/orders/${MARKET}/fills`,
      `/api/trading/${USER}/portfolio`,
      `/api/trading/${USER}/positions/7`,
      "/api/tags",
      "/api/traders?limit=10",
      "/api/leaderboard?period=7d"
    ]) {
      expect(isBackendReadModelRequest("GET", url), url).toBe(true)
      expect(isBackendReadModelRequest("HEAD", url), url).toBe(true)
    }
  })

  it("keeps writes and the backend's own tables on the primary", () => {
    for (const [method, url] of [
      ["GET", `/api/markets/${MARKET}/comments`],
      ["POST", `/api/markets/${MARKET}/comments`],
      ["PATCH", `/api/markets/${MARKET}/comments/3`],
      ["POST", `/api/markets/${MARKET}/pricing/quote`],
      ["POST", "/api/markets-batch/price-views"],
      ["GET", "/api/notifications"],
      ["GET", "/api/notifications/unread-count"],
      ["GET", "/api/auth/challenge?address=x"],
      ["POST", "/api/auth/verify"],
      ["GET", "/api/auth/me"],
      ["GET", "/api/point"],
      ["GET", "/api/rewards"],
      ["GET", "/api/referral"],
      ["GET", `/api/admin/users/${USER}`],
      ["GET", "/api/faucet/status?address=x"],
      ["POST", "/api/faucet"],
      ["POST", "/api/aa/bundler"],
      ["GET", "/health"],
      ["GET", "/ready"],
      ["GET", "/version"],
      ["GET", "/api/marketsx"],
      ["GET", "/api/markets/x/trades/extra"]
    ] as const) {
      expect(isBackendReadModelRequest(method, url), `${method} ${url}`).toBe(false)
    }
  })
})
