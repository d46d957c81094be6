/**
 * Compiles every JSON Schema an OpenAPI 3.1 document holds with ajv (draft 2020-12, the dialect
 * of OpenAPI 3.1), strictly: an unknown keyword, a `required` property that is not declared, an
 * unknown format or two schemas with one `$id` is an error, as it is for any app that validates
 * with ajv. Returns the failures, each naming where in the document it is.
 */
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormats from "ajv-formats"

type Json = Record<string, any>

/** The schemas of a document, by where they stand (a JSON pointer). */
const schemasOf = (document: Json): Array<[string, Json]> => {
  const found: Array<[string, Json]> = []
  const escape = (segment: string) => segment.replace(/~/g, "~0").replace(/\//g, "~1")
  for (const [path, item] of Object.entries<Json>(document["paths"] ?? {})) {
    for (const [method, operation] of Object.entries<Json>(item)) {
      const at = `#/paths/${escape(path)}/${method}`
      for (const [i, parameter] of (operation["parameters"] ?? []).entries()) found.push([`${at}/parameters/${i}`, parameter.schema])
      for (const [type, media] of Object.entries<Json>(operation["requestBody"]?.["content"] ?? {})) {
        found.push([`${at}/requestBody/content/${escape(type)}`, media["schema"]])
      }
      for (const [status, response] of Object.entries<Json>(operation["responses"] ?? {})) {
        for (const [type, media] of Object.entries<Json>(response["content"] ?? {})) {
          found.push([`${at}/responses/${status}/content/${escape(type)}`, media["schema"]])
        }
        for (const [name, header] of Object.entries<Json>(response["headers"] ?? {})) {
          found.push([`${at}/responses/${status}/headers/${name}`, header["schema"]])
        }
      }
    }
  }
  return found.filter(([, schema]) => schema !== undefined)
}

const BASE = "urn:openapi:document"

export const compileDocument = (document: Json): Array<string> => {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true })
  addFormats.default(ajv)
  // `#/components/schemas/X` is a pointer into the document; as one JSON Schema resource the
  // components are its `$defs`, which ajv walks (so every `$id` in them is seen).
  const text = JSON.stringify(document).replaceAll('"#/components/schemas/', `"${BASE}#/$defs/`)
  const rewritten = JSON.parse(text) as Json
  const failures: Array<string> = []
  try {
    ajv.addSchema({ $id: BASE, $defs: rewritten["components"]?.["schemas"] ?? {} })
  } catch (error) {
    return [`#/components/schemas: ${(error as Error).message}`]
  }
  const components = Object.keys(rewritten["components"]?.["schemas"] ?? {}).map((name): [string, () => unknown] => [
    `#/components/schemas/${name}`,
    () => ajv.getSchema(`${BASE}#/$defs/${encodeURIComponent(name.replace(/~/g, "~0").replace(/\//g, "~1"))}`)
  ])
  // Each distinct inline schema once (the freshness headers' schemas repeat on every response).
  const distinct = new Map<string, [string, Json]>()
  for (const [at, schema] of schemasOf(rewritten))
    if (!distinct.has(JSON.stringify(schema))) distinct.set(JSON.stringify(schema), [at, schema])
  const inline = [...distinct.values()].map(([at, schema]): [string, () => unknown] => [at, () => ajv.compile(schema)])
  for (const [at, compile] of [...components, ...inline]) {
    try {
      if (compile() === undefined) failures.push(`${at}: not found`)
    } catch (error) {
      failures.push(`${at}: ${(error as Error).message}`)
    }
  }
  return failures
}

/** How many schemas `compileDocument` compiles in `document` (so a check that passes is known to have looked). */
export const schemaCount = (document: Json): number =>
  Object.keys(document["components"]?.["schemas"] ?? {}).length + schemasOf(document).length
