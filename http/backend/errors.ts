/**
 * NOT_FOUND (404): the one code the backend uses beyond the spec's closed set, for what the set
 * has no word for: an unknown route, event, order, transaction, comment or notification. (An
 * unknown market is MARKET_NOT_FOUND.) Same body shape `{ error, code, message }`.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class NotFound extends Schema.TaggedError<NotFound>()(
  "NOT_FOUND",
  { message: Schema.String },
  {
    ...HttpApiSchema.annotations({ status: 404 }),
    identifier: "NotFoundError",
    title: "NOT_FOUND",
    description: "NOT_FOUND (HTTP 404): no such route, event, order, transaction, comment or notification"
  }
) {
  readonly code = "NOT_FOUND" as const

  static readonly wire = Schema.transform(
    Schema.Struct({ error: Schema.Literal("NOT_FOUND"), code: Schema.Literal("NOT_FOUND"), message: Schema.String }),
    NotFound,
    {
      strict: true,
      decode: (body) => ({ _tag: "NOT_FOUND" as const, message: body.message }),
      encode: (error) => ({ error: "NOT_FOUND" as const, code: "NOT_FOUND" as const, message: error.message })
    }
  ).annotations({
    ...HttpApiSchema.annotations({ status: 404 }),
    identifier: "NOT_FOUND",
    title: "NOT_FOUND",
    description: "NOT_FOUND (HTTP 404): no such route, event, order, transaction, comment or notification"
  })
}
