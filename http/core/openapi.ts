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
 *   indexer's freshness headers, the backend's request id);
 * - the `$id` Effect gives its built-in schemas (`"/schemas/unknown"` for `Schema.Unknown`, and so
 *   on) is removed wherever it stands: the same `$id` on several schemas of one document makes it
 *   invalid JSON Schema (ajv refuses to compile it), and nothing refers to one;
 * - a schema that refers to a component and narrows it (`{ $ref: Int, minimum: 0 }`, Effect's
 *   refinements of `Schema.Int`) also states the component's `type`: the same constraint (the
 *   component already requires it), said where strict validators look for it (ajv's strictTypes
 *   refuses `minimum` without a `type` beside it);
 * - `servers` names where the API answers: the origin that served the document, then the local
 *   default (`servers`).
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

/** Deletes, in place, every `$id` Effect generates for its built-in schemas (they start with /schemas/). */
const removeBuiltInIds = (node: unknown): void => {
  if (Array.isArray(node)) {
    for (const item of node) removeBuiltInIds(item)
  } else if (typeof node === "object" && node !== null) {
    const record = node as Json
    if (typeof record["$id"] === "string" && record["$id"].startsWith("/schemas/")) delete record["$id"]
    for (const value of Object.values(record)) removeBuiltInIds(value)
  }
}

/** Keywords that apply to one type of value only (numbers, strings, arrays, objects). */
const TYPED_KEYWORDS = [
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "pattern",
  "minItems",
  "maxItems",
  "properties",
  "required"
]

/** Writes, in place, the referred component's `type` beside a `$ref` that carries typed keywords without one. */
const typeBesideRefs = (node: unknown, schemas: Json): void => {
  if (Array.isArray(node)) {
    for (const item of node) typeBesideRefs(item, schemas)
  } else if (typeof node === "object" && node !== null) {
    const record = node as Json
    const ref = record["$ref"]
    if (typeof ref === "string" && record["type"] === undefined && TYPED_KEYWORDS.some((keyword) => keyword in record)) {
      const type = ref.startsWith("#/components/schemas/") ? schemas[ref.slice("#/components/schemas/".length)]?.["type"] : undefined
      if (typeof type === "string") record["type"] = type
    }
    for (const value of Object.values(record)) typeBesideRefs(value, schemas)
  }
}

export interface OpenApiAdjustment {
  /** Headers every response carries, by name, as OpenAPI header objects. */
  readonly headers: Json
  /** What a 400 means, in place of HttpApi's generic description (kept when absent). */
  readonly badRequest?: string
  /** Where the API answers, as OpenAPI server objects, in order of preference. */
  readonly servers: ReadonlyArray<{ readonly url: string; readonly description: string }>
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
    removeBuiltInIds(spec)
    typeBesideRefs(spec, schemas)
    spec["servers"] = adjustment.servers.map((server) => ({ ...server }))
    return spec
  }
