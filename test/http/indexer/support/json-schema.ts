/**
 * A small JSON Schema (2020-12, as OpenAPI 3.1 uses it) validator for the tests: enough keywords
 * for the documents HttpApi generates, and strict about the rest. A schema keyword it does not
 * know is an error, so a document that starts using one cannot pass unchecked.
 */

type Json = unknown
type Schema = Record<string, unknown> | boolean

/** Keywords that only annotate. */
const ANNOTATIONS = new Set([
  "title",
  "description",
  "examples",
  "default",
  "deprecated",
  "readOnly",
  "writeOnly",
  "$comment",
  "format",
  "contentEncoding",
  "contentMediaType",
  "$id",
  "$schema"
])

const VALIDATING = new Set([
  "$ref",
  "type",
  "enum",
  "const",
  "properties",
  "required",
  "additionalProperties",
  "patternProperties",
  "propertyNames",
  "items",
  "prefixItems",
  "minItems",
  "maxItems",
  "uniqueItems",
  "anyOf",
  "oneOf",
  "allOf",
  "not",
  "pattern",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf"
])

const typeOf = (value: Json): string => {
  if (value === null) return "null"
  if (Array.isArray(value)) return "array"
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number"
  return typeof value
}

const matchesType = (value: Json, type: string): boolean => {
  const actual = typeOf(value)
  return actual === type || (type === "number" && actual === "integer")
}

const deepEqual = (a: Json, b: Json): boolean => JSON.stringify(a) === JSON.stringify(b)

export class JsonSchemaValidator {
  constructor(private readonly root: Record<string, unknown>) {}

  private resolve(ref: string): Schema {
    if (!ref.startsWith("#/")) throw new Error(`unsupported $ref ${ref}`)
    let node: unknown = this.root
    for (const part of ref.slice(2).split("/")) {
      const key = part.replace(/~1/g, "/").replace(/~0/g, "~")
      node = (node as Record<string, unknown> | undefined)?.[key]
      if (node === undefined) throw new Error(`unresolvable $ref ${ref}`)
    }
    return node as Schema
  }

  /** Every problem of `value` against `schema`, as "path: problem" lines (empty when valid). */
  errors(value: Json, schema: Schema, path = "$"): Array<string> {
    if (schema === true) return []
    if (schema === false) return [`${path}: no value is allowed here`]
    const out: Array<string> = []
    for (const key of Object.keys(schema)) {
      if (!VALIDATING.has(key) && !ANNOTATIONS.has(key)) out.push(`${path}: schema uses unsupported keyword ${key}`)
    }
    if (typeof schema["$ref"] === "string") out.push(...this.errors(value, this.resolve(schema["$ref"]), path))
    const type = schema["type"]
    if (type !== undefined) {
      const types = Array.isArray(type) ? (type as Array<string>) : [type as string]
      if (!types.some((t) => matchesType(value, t))) {
        out.push(`${path}: expected ${types.join(" | ")}, got ${typeOf(value)} ${JSON.stringify(value)?.slice(0, 80)}`)
        return out
      }
    }
    if (Array.isArray(schema["enum"]) && !schema["enum"].some((e) => deepEqual(e, value))) {
      out.push(`${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema["enum"])}`)
    }
    if ("const" in schema && !deepEqual(schema["const"], value)) out.push(`${path}: expected ${JSON.stringify(schema["const"])}`)
    if (typeof value === "string") {
      if (typeof schema["pattern"] === "string" && !new RegExp(schema["pattern"], "u").test(value)) {
        out.push(`${path}: ${JSON.stringify(value)} does not match ${schema["pattern"]}`)
      }
      const length = [...value].length
      if (typeof schema["minLength"] === "number" && length < schema["minLength"]) out.push(`${path}: shorter than ${schema["minLength"]}`)
      if (typeof schema["maxLength"] === "number" && length > schema["maxLength"]) out.push(`${path}: longer than ${schema["maxLength"]}`)
    }
    if (typeof value === "number") {
      if (typeof schema["minimum"] === "number" && value < schema["minimum"]) out.push(`${path}: ${value} < minimum ${schema["minimum"]}`)
      if (typeof schema["maximum"] === "number" && value > schema["maximum"]) out.push(`${path}: ${value} > maximum ${schema["maximum"]}`)
      if (typeof schema["exclusiveMinimum"] === "number" && value <= schema["exclusiveMinimum"])
        out.push(`${path}: ${value} <= ${schema["exclusiveMinimum"]}`)
      if (typeof schema["exclusiveMaximum"] === "number" && value >= schema["exclusiveMaximum"])
        out.push(`${path}: ${value} >= ${schema["exclusiveMaximum"]}`)
      if (typeof schema["multipleOf"] === "number" && value % schema["multipleOf"] !== 0)
        out.push(`${path}: not a multiple of ${schema["multipleOf"]}`)
    }
    if (Array.isArray(value)) {
      if (typeof schema["minItems"] === "number" && value.length < schema["minItems"])
        out.push(`${path}: fewer than ${schema["minItems"]} items`)
      if (typeof schema["maxItems"] === "number" && value.length > schema["maxItems"])
        out.push(`${path}: more than ${schema["maxItems"]} items`)
      const prefix = (schema["prefixItems"] as Array<Schema> | undefined) ?? []
      value.forEach((item, i) => {
        const itemSchema = i < prefix.length ? prefix[i] : (schema["items"] as Schema | undefined)
        if (itemSchema !== undefined) out.push(...this.errors(item, itemSchema, `${path}[${i}]`))
      })
      if (schema["uniqueItems"] === true && new Set(value.map((v) => JSON.stringify(v))).size !== value.length)
        out.push(`${path}: items not unique`)
    }
    if (typeOf(value) === "object") {
      const object = value as Record<string, Json>
      const properties = (schema["properties"] as Record<string, Schema> | undefined) ?? {}
      for (const name of (schema["required"] as Array<string> | undefined) ?? []) {
        if (!(name in object)) out.push(`${path}: missing required property ${name}`)
      }
      const patterns = Object.entries((schema["patternProperties"] as Record<string, Schema> | undefined) ?? {})
      for (const [name, v] of Object.entries(object)) {
        if (schema["propertyNames"] !== undefined) out.push(...this.errors(name, schema["propertyNames"] as Schema, `${path}.<${name}>`))
        const matched = patterns.filter(([p]) => new RegExp(p, "u").test(name))
        for (const [, s] of matched) out.push(...this.errors(v, s, `${path}.${name}`))
        if (name in properties) out.push(...this.errors(v, properties[name]!, `${path}.${name}`))
        else if (matched.length === 0 && schema["additionalProperties"] !== undefined) {
          out.push(...this.errors(v, schema["additionalProperties"] as Schema, `${path}.${name}`))
        }
      }
    }
    if (Array.isArray(schema["allOf"])) for (const s of schema["allOf"] as Array<Schema>) out.push(...this.errors(value, s, path))
    if (Array.isArray(schema["anyOf"])) {
      const results = (schema["anyOf"] as Array<Schema>).map((s) => this.errors(value, s, path))
      if (!results.some((r) => r.length === 0)) out.push(`${path}: matches none of anyOf: ${results.map((r) => r[0]).join(" / ")}`)
    }
    if (Array.isArray(schema["oneOf"])) {
      const passing = (schema["oneOf"] as Array<Schema>).filter((s) => this.errors(value, s, path).length === 0).length
      if (passing !== 1) out.push(`${path}: matches ${passing} of oneOf, expected exactly 1`)
    }
    if (schema["not"] !== undefined && this.errors(value, schema["not"] as Schema, path).length === 0)
      out.push(`${path}: matches a "not" schema`)
    return out
  }
}
