/**
 * The one adjustment of an OpenAPI document generated from an HttpApi (the indexer's and the
 * backend's), so that it says exactly what the server does:
 *
 * - HttpApi documents a 400 `HttpApiDecodeError` on every endpoint; neither server ever sends it
 *   (the indexer's `request-errors.ts` and the backend's `middleware.ts` turn it into the error
 *   the parameter's kind gives, `http/core/params.ts`), so it is removed from every response and
 *   from the components; a response left with no body schema is removed, and a 400 that kept
 *   HttpApi's description is given the server's own (`badRequest`) when it has one;
 * - every response documents the headers the server puts on every answer (`headers`: the
 *   indexer's freshness headers, the backend's request id).
 *
 * The adjustment mutates the generated document in place and returns it (HttpApi's `transform`).
 */

type Json = Record<string, any>

const DECODE_ERROR_REF = "#/components/schemas/HttpApiDecodeError"

/** HttpApi's description of the 400 it generates. */
const DECODE_ERROR_DESCRIPTION = "The request did not match the expected schema"

/** The schema without the decode error among its alternatives; undefined when nothing is left. */
const withoutDecodeError = (schema: Json): Json | undefined => {
  if (schema["$ref"] === DECODE_ERROR_REF) return undefined
  const alternatives = schema["anyOf"] ?? schema["oneOf"]
  if (!Array.isArray(alternatives)) return schema
  const kept = alternatives.filter((alternative: Json) => alternative["$ref"] !== DECODE_ERROR_REF)
  if (kept.length === 0) return undefined
  if (kept.length === 1) return kept[0]
  return { ...schema, [schema["anyOf"] ? "anyOf" : "oneOf"]: kept }
}

export interface OpenApiAdjustment {
  /** Headers every response carries, by name, as OpenAPI header objects. */
  readonly headers: Json
  /** What a 400 means, in place of HttpApi's generic description (kept when absent). */
  readonly badRequest?: string
}

/** The `transform` of an HttpApi's OpenAPI annotations: the document as served at /api/openapi.json. */
export const adjustOpenApi =
  (adjustment: OpenApiAdjustment) =>
  (spec: Json): Json => {
    for (const item of Object.values<Json>(spec["paths"] ?? {})) {
      for (const operation of Object.values<Json>(item)) {
        const responses: Json = operation["responses"] ?? {}
        for (const [status, response] of Object.entries<Json>(responses)) {
          const media = response["content"]?.["application/json"]
          if (media?.["schema"] !== undefined) {
            const schema = withoutDecodeError(media["schema"])
            if (schema === undefined) {
              delete responses[status]
              continue
            }
            media["schema"] = schema
            if (status === "400" && adjustment.badRequest !== undefined && response["description"] === DECODE_ERROR_DESCRIPTION) {
              response["description"] = adjustment.badRequest
            }
          }
          response["headers"] = { ...adjustment.headers, ...(response["headers"] ?? {}) }
        }
      }
    }
    const schemas: Json = spec["components"]?.["schemas"] ?? {}
    delete schemas["HttpApiDecodeError"]
    delete schemas["Issue"]
    delete schemas["PropertyKey"]
    return spec
  }
