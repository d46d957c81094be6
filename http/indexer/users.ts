/**
 * `/api/users/{address}/...`: accuracy of a user's resolved calls (see `user-stats.ts` for the
 * definition), their positions in closed markets, and their CLOB maker fills.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { IndexerItem, IndexerList } from "../../schema/envelopes.js"
import { IndexerInvalidAddress, IndexerInvalidMarketId } from "../../schema/errors.js"
import { Outcome } from "../../schema/enums.js"
import { Timestamp } from "../../schema/primitives.js"
import { Match } from "./exchange.js"
import { Position } from "./market-book.js"
import { AddressPath, marketIdParam, NoQuery, optional, page, strictQuery } from "../core/params.js"
import { Accuracy } from "./user-stats.js"

export const ResolvedPosition = Schema.Struct({
  ...Position.fields,
  question: Schema.String,
  resolutionType: Schema.Literal("ORACLE", "EMERGENCY", "REFUND"),
  outcome: Schema.NullOr(Schema.Boolean).annotations({ description: "true = YES won; null in refund mode" }),
  resolvedAt: Schema.NullOr(Timestamp),
  call: Schema.NullOr(Outcome).annotations({
    description: "the side the user's router trades left them net long on; null when even or in refund mode"
  }),
  correct: Schema.NullOr(Schema.Boolean).annotations({ description: "whether the call matched the outcome; null without a call" })
}).annotations({
  identifier: "ResolvedPosition",
  title: "Resolved position",
  description: "a user's position in a resolved or refunded market"
})
export type ResolvedPosition = typeof ResolvedPosition.Type

export const MakerFillQuery = strictQuery({
  marketId: optional(marketIdParam("marketId", "only fills in this market")),
  ...page
})
export type MakerFillQuery = typeof MakerFillQuery.Type

export const ResolvedPositionQuery = strictQuery({ ...page })

export class UsersGroup extends HttpApiGroup.make("users")
  .add(
    HttpApiEndpoint.get("accuracy", "/api/users/:address/accuracy")
      .setPath(AddressPath)
      .setUrlParams(NoQuery)
      .addSuccess(IndexerItem(Accuracy))
      .addError(IndexerInvalidAddress.wire)
      .annotate(OpenApi.Summary, "Accuracy of the user's calls in resolved markets")
  )
  .add(
    HttpApiEndpoint.get("resolvedPositions", "/api/users/:address/resolved-positions")
      .setPath(AddressPath)
      .setUrlParams(ResolvedPositionQuery)
      .addSuccess(IndexerList(ResolvedPosition))
      .addError(IndexerInvalidAddress.wire)
      .annotate(OpenApi.Summary, "The user's positions in resolved and refunded markets, latest closed first (then market id descending)")
  )
  .add(
    HttpApiEndpoint.get("makerFills", "/api/users/:address/maker-fills")
      .setPath(AddressPath)
      .setUrlParams(MakerFillQuery)
      .addSuccess(IndexerList(Match))
      .addError(IndexerInvalidAddress.wire)
      .addError(IndexerInvalidMarketId.wire)
      .annotate(OpenApi.Summary, "CLOB matches in which the user's order was the maker, newest first")
  ) {}
