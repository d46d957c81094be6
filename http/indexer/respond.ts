/**
 * Handlers answer with a response they encoded themselves through the endpoint's success schema.
 * HttpApi would turn a failed success-encoding into a 400 "request did not match" (it treats every
 * ParseError as a decode error); encoding here makes such a bug a defect, which the error
 * middleware answers 500 and logs, and keeps 400 for bad requests only.
 */
import { HttpServerResponse } from "@effect/platform"
import { Effect, Schema } from "effect"

/** Encodes a value of `schema` into a 200 JSON response; an unencodable value is a defect. */
export const respond = <A, I>(schema: Schema.Schema<A, I>) => {
  const encode = Schema.encode(schema)
  return (value: A): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
    Effect.map(Effect.orDie(encode(value)), (json) => HttpServerResponse.unsafeJson(json))
}
