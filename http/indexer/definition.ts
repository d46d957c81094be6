/**
 * The indexer API's definition: every group of the spec's "Indexer endpoints (public, GET)" table.
 * Shared by the server (`api.ts`), the OpenAPI document and the typed client the backend uses.
 * Kept apart from the handlers, which import it.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { InvalidParameter, NotFound, ServiceUnavailable } from "../../schema/errors.js"
import { AdminGroup } from "./admin.js"
import { adjustOpenApi } from "../core/openapi.js"
import { EventsGroup } from "./events.js"
import { ExchangeGroup } from "./exchange.js"
import {
  INDEXED_BLOCK_HASH_HEADER,
  INDEXED_BLOCK_HEADER,
  INDEXED_GENERATION_HEADER,
  INDEXED_LAG_HEADER,
  INDEXED_STATUS_HEADER
} from "./freshness.js"
import { HealthGroup } from "../core/indexer-health.js"
import { LiquidityGroup } from "./liquidity.js"
import { MarketAmmGroup } from "./market-amm.js"
import { MarketBookGroup } from "./market-book.js"
import { MarketPricesGroup } from "./market-prices.js"
import { MarketTradesGroup } from "./market-trades.js"
import { MarketsGroup } from "./markets.js"
import { OraclesGroup } from "./oracles.js"
import { PortfolioGroup } from "./portfolio.js"
import { StatsGroup } from "./stats.js"
import { TradeBreakdownGroup } from "./trade-breakdown.js"
import { UserStatsGroup } from "./user-stats.js"
import { UsersGroup } from "./users.js"

/** Every indexer answer carries the freshness headers (`freshness.ts`); the document says so on every response. */
const FRESHNESS_HEADERS = {
  "X-Indexed-Block": {
    description: `(${INDEXED_BLOCK_HEADER}) last block whose changes the answer reflects at least, or "none" before the first; a client that does not see a transaction of a later block retries`,
    schema: { type: "string", pattern: "^(none|0|[1-9][0-9]*)$" }
  },
  "X-Indexed-Block-Hash": {
    description: `(${INDEXED_BLOCK_HASH_HEADER}) hash of that block, or "none"`,
    schema: { type: "string", pattern: "^(none|0x[0-9a-f]{64})$" }
  },
  "X-Indexed-Generation": {
    description: `(${INDEXED_GENERATION_HEADER}) generation of the index the answer was read from (public, then index_<n> after each blue-green re-index), or "none" before the first block; an answer is read from one generation only`,
    schema: { type: "string", pattern: "^(none|public|index_[1-9][0-9]*)$" }
  },
  "X-Indexed-Status": {
    description: `(${INDEXED_STATUS_HEADER}) health's last judgement, as /api/health states it: ok, degraded (the index trails the chain or its indexer or node is silent), or unknown before the first`,
    schema: { type: "string", enum: ["ok", "degraded", "unknown"] }
  },
  "X-Indexed-Lag": {
    description: `(${INDEXED_LAG_HEADER}) blocks the index trails the chain's head by, or "unknown"`,
    schema: { type: "string", pattern: "^(unknown|0|[1-9][0-9]*)$" }
  }
}

const DESCRIPTION = `Public, read-only data of a binary prediction-market protocol (chain 130), indexed from its contract events.

- Envelope: \`{ data, meta }\`. Lists: \`meta { limit, offset, count }\`, count = all matching rows. Single items: \`meta: null\`.
- Pagination: \`limit\` 1 to 100 (default 20), \`offset\` 0 or more (default 0). Every list has a fixed order ending in a unique key, so pages never overlap or skip.
- Wire format: token amounts are decimal strings with six fraction digits (\`"125000.000000"\`), prices decimal strings from 0 to 1 (\`"0.620000"\`), other uint256 values decimal strings, never JSON numbers; timestamps unix seconds; addresses and hashes lowercase.
- Market ids: the decimal \`id\` or the 64-hex \`marketIdHex\`.
- Errors: \`{ error, message }\` with a PascalCase name: InvalidParameter, InvalidAddress, InvalidMarketId (400); MarketNotFound, EventNotFound, OrderNotFound, NotFound (404); ServiceUnavailable (503). The message names the offending parameter.
- Freshness: every response carries \`X-Indexed-Block\` (and \`X-Indexed-Block-Hash\`), the last block the answer reflects at least. Not seeing a transaction of a later block yet means: retry shortly. Answers change only when that header does.
- Parameters not listed for an endpoint are rejected (400), so a misspelt filter never silently returns everything.`

export class IndexerApi extends HttpApi.make("indexer")
  .add(MarketsGroup)
  .add(MarketTradesGroup)
  .add(MarketPricesGroup)
  .add(MarketBookGroup)
  .add(MarketAmmGroup)
  .add(EventsGroup)
  .add(PortfolioGroup)
  .add(UserStatsGroup)
  .add(UsersGroup)
  .add(ExchangeGroup)
  .add(TradeBreakdownGroup)
  .add(LiquidityGroup)
  .add(OraclesGroup)
  .add(AdminGroup)
  .add(StatsGroup)
  .add(HealthGroup)
  .addError(InvalidParameter.wire)
  // Any path can fail to resolve to a route (bad percent-encoding, a segment too many).
  .addError(NotFound.wire)
  .addError(ServiceUnavailable.wire)
  .annotateContext(
    OpenApi.annotations({
      title: "Indexer API",
      version: "1.0.0",
      description: DESCRIPTION,
      transform: adjustOpenApi({
        headers: FRESHNESS_HEADERS,
        // The indexer reads no body: every 400 is a parameter (`request-errors.ts`).
        badRequest: "a parameter is malformed; the message names it",
        servers: [
          { url: "/", description: "the origin that served this document" },
          { url: "http://127.0.0.1:42069", description: "npm start's indexer API (INDEXER_PORT)" }
        ]
      })
    })
  ) {}
