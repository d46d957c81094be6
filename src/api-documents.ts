/**
 * The two published OpenAPI 3.1 documents, built in-process from the API definitions exactly as
 * the servers build them (`HttpApiBuilder.middlewareOpenApi` serves `OpenApi.fromApi` of the same
 * definition, its `transform` included): the indexer's at /api/openapi.json of INDEXER_PORT, the
 * backend's at /api/openapi.json of BACKEND_PORT. The typed client (`client/`) is generated from
 * these, and the document checks (ajv, redocly) read them, with no server running.
 */
import { OpenApi } from "@effect/platform"
import { BackendApi } from "../http/backend/definition.js"
import { IndexerApi } from "../http/indexer/definition.js"

/** An OpenAPI document as JSON. */
export type OpenApiDocument = Record<string, any>

/** The APIs that publish a document, by the name their client files carry. */
export const API_NAMES = ["indexer", "backend"] as const
export type ApiName = (typeof API_NAMES)[number]

/** A fresh copy of `api`'s document (callers may mutate it). */
export const apiDocument = (api: ApiName): OpenApiDocument =>
  structuredClone(api === "indexer" ? OpenApi.fromApi(IndexerApi) : OpenApi.fromApi(BackendApi)) as OpenApiDocument
