/**
 * The backend API's definition: one HttpApi whose groups are the features (system, markets,
 * events, pricing, trading; auth, faucet, community and the stream join as further groups). The
 * typed client (`client.ts`) and the OpenAPI document are derived from it.
 *
 * Errors: every answer that is not a success is `{ error, code, message, details? }` with a code
 * of the spec's closed set (`schema/errors.ts`) and its status; INDEXER_UNAVAILABLE and
 * VALIDATION_FAILED can come from any endpoint.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { Forbidden, IndexerUnavailable, RateLimitExceeded, ValidationFailed } from "../../schema/errors.js"
import { adjustOpenApi } from "../core/openapi.js"
import { AaGroup } from "./aa/api.js"
import { AdminGroup, AuthGroup, documentRoles } from "./auth/api.js"
import { CommentsGroup } from "./community/comments-api.js"
import { FaucetGroup } from "./faucet/api.js"
import { EventsGroup, MarketsGroup } from "./markets/api.js"
import { NotFound } from "./errors.js"
import { NotificationsGroup } from "./community/notifications-api.js"
import { SystemGroup } from "./system/api.js"
import { PricingGroup } from "./pricing/api.js"
import { RewardsGroup } from "./rewards/api.js"
import { TradingGroup } from "./trading/api.js"

/**
 * Every backend answer carries its request id (`middleware.ts`); the document says so on every
 * response (`http/core/openapi.ts` also takes out HttpApi's own decode error, which
 * `middleware.ts` turns into VALIDATION_FAILED, INVALID_ADDRESS or INVALID_MARKET_ID), and names
 * each operation's role (`documentRoles`).
 */
const adjustBackendOpenApi = adjustOpenApi({
  headers: {
    "X-Request-Id": {
      description: "the request's id (the one sent, if sane, else a new UUID); equals meta.reqId",
      schema: { type: "string" }
    }
  },
  servers: [
    { url: "/", description: "the origin that served this document" },
    { url: "http://127.0.0.1:3000", description: "npm start's backend API (BACKEND_PORT)" }
  ]
})

const DESCRIPTION = `The view model apps build on: markets and events, pricing and quotes, trading and portfolios, rewards and social.

Envelope: {data, meta: {timestamp, version: "v2", reqId}}; lists add meta.pagination {limit, offset, total} (limit default 20, max 100).
Errors: {error, code, message, details?} with code from a closed set (MARKET_NOT_FOUND 404, MARKET_PAUSED 400, INDEXER_UNAVAILABLE 503,
INVALID_ADDRESS 400, INVALID_MARKET_ID 400, AUTH_REQUIRED 401, AUTH_INVALID 401, FORBIDDEN 403, VALIDATION_FAILED 400,
RATE_LIMIT_EXCEEDED 429, INSUFFICIENT_BALANCE 400, SLIPPAGE_EXCEEDED 400); an unknown route is 404 with code NOT_FOUND.
Caching: X-Cache HIT|MISS and X-Cache-Tier hot (2 s) | warm (60 s); an answer is never served after the indexed head it was computed at changes.
Sessions: SIWE sign-in (GET /api/auth/challenge, POST /api/auth/verify) sets the predix_session cookie; operations with a security requirement need it (and the role it lists).
Account abstraction: passkey (/api/aa/auth/passkey/...) and ECDSA (/api/aa/auth/ecdsa/...) sign-in set the same cookie for an ERC-4337 smart account; /api/aa/bundler proxies the bundler; /api/aa/paymaster/sponsor signs paymasterAndData for protocol actions.
Rate limits: 60/min per IP without a session, 300/min per user, 10,000/day, 5/min per IP on the sign-in endpoints (configurable); every /api answer carries X-RateLimit-Limit, -Remaining, -Reset; a refusal is RATE_LIMIT_EXCEEDED with Retry-After.
Amounts are Money {decimal, raw, decimals, unit}; prices decimal strings; times unix seconds; addresses lowercase; market ids 0x + 64 hex.`

export class BackendApi extends HttpApi.make("backend")
  .add(SystemGroup)
  .add(MarketsGroup)
  .add(EventsGroup)
  .add(PricingGroup)
  .add(TradingGroup)
  .add(AuthGroup)
  .add(AdminGroup)
  .add(FaucetGroup)
  .add(CommentsGroup)
  .add(NotificationsGroup)
  .add(RewardsGroup)
  .add(AaGroup)
  .addError(IndexerUnavailable.wire)
  // Any /api request can be over a rate limit, and any state-changing one with the session
  // cookie from a disallowed origin is refused (guard.ts).
  .addError(RateLimitExceeded.wire)
  .addError(Forbidden.wire)
  .addError(ValidationFailed.wire)
  // Any path can fail to resolve to a route.
  .addError(NotFound.wire)
  .annotateContext(
    OpenApi.annotations({
      title: "PrediX backend API",
      version: "2.0.0",
      description: DESCRIPTION,
      transform: (spec) => documentRoles(adjustBackendOpenApi(spec))
    })
  ) {}
