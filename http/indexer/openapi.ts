/**
 * Adjustments of the OpenAPI document generated from the indexer API, so that it says exactly what
 * the server does:
 * - HttpApi documents a 400 `HttpApiDecodeError` on every endpoint; this server never sends it
 *   (`request-errors.ts` turns it into `InvalidParameter`, `InvalidAddress` or `InvalidMarketId`),
 *   so it is removed from every response and from the components;
 * - every response documents the freshness headers (`freshness.ts`).
 */
import { INDEXED_BLOCK_HASH_HEADER, INDEXED_BLOCK_HEADER, INDEXED_LAG_HEADER, INDEXED_STATUS_HEADER } from "./freshness.js"

const DECODE_ERROR_REF = "#/components/schemas/HttpApiDecodeError"

const FRESHNESS_HEADERS = {
  "X-Indexed-Block": {
    description: `(${INDEXED_BLOCK_HEADER}) last block whose changes the answer reflects at least, or "none" before the first; a client that does not see a transaction of a later block retries`,
    schema: { type: "string", pattern: "^(none|0|[1-9][0-9]*)$" }
  },
  "X-Indexed-Block-Hash": {
    description: `(${INDEXED_BLOCK_HASH_HEADER}) hash of that block, or "none"`,
    schema: { type: "string", pattern: "^(none|0x[0-9a-f]{64})$" }
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

type Json = Record<string, any>

const withoutDecodeError = (schema: Json): Json | undefined => {
  if (schema["$ref"] === DECODE_ERROR_REF) return undefined
  const alternatives = schema["anyOf"] ?? schema["oneOf"]
  if (!Array.isArray(alternatives)) return schema
  const kept = alternatives.filter((alternative: Json) => alternative["$ref"] !== DECODE_ERROR_REF)
  if (kept.length === 0) return undefined
  if (kept.length === 1) return kept[0]
  return { ...schema, [schema["anyOf"] ? "anyOf" : "oneOf"]: kept }
}

/** The document as served at /api/openapi.json. */
export const adjustOpenApi = (spec: Json): Json => {
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
          if (status === "400" && response["description"] === "The request did not match the expected schema") {
            response["description"] = "a parameter is malformed; the message names it"
          }
        }
        response["headers"] = { ...FRESHNESS_HEADERS, ...(response["headers"] ?? {}) }
      }
    }
  }
  const schemas: Json = spec["components"]?.["schemas"] ?? {}
  delete schemas["HttpApiDecodeError"]
  delete schemas["Issue"]
  delete schemas["PropertyKey"]
  return spec
}
