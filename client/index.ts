/**
 * The typed client of both APIs: openapi-fetch over the generated types (`indexer.d.ts`,
 * `backend.d.ts`, written by `npm run client:generate` from the published documents and checked
 * for drift in `npm test`). Every path, parameter, body and answer is typed from the document:
 * `indexer.GET("/api/markets/{id}", { params: { path: { id: "15" } } })`.
 *
 * This folder imports nothing of the project's own (only openapi-fetch), so an app can copy it or
 * depend on it without the server. Effect users have `http/backend/client.ts` (`HttpApiClient`).
 *
 * Conventions the types carry: amounts and uint256 values are decimal strings, addresses
 * lowercase, times unix seconds; an error answer is the API's error body (`{ error, message }`
 * from the indexer, `{ error, code, message, details? }` from the backend).
 */
import createClient, { type Client, type ClientOptions } from "openapi-fetch"
import type { paths as BackendPaths } from "./backend.js"
import type { paths as IndexerPaths } from "./indexer.js"

export type { BackendPaths, IndexerPaths }
export type { components as BackendComponents } from "./backend.js"
export type { components as IndexerComponents } from "./indexer.js"

export type IndexerClient = Client<IndexerPaths>
export type BackendClient = Client<BackendPaths>

/** A client of the public, read-only indexer API at `baseUrl` (e.g. http://127.0.0.1:42069). */
export const createIndexerClient = (baseUrl: string, options: Omit<ClientOptions, "baseUrl"> = {}): IndexerClient =>
  createClient<IndexerPaths>({ ...options, baseUrl })

/**
 * A client of the backend API at `baseUrl` (e.g. http://127.0.0.1:3000). It sends cookies
 * (`credentials: "include"`), so the session a sign-in set (`predix_session`) goes with every
 * request in a browser; outside one, pass the cookie in `headers` (see docs/client.md).
 */
export const createBackendClient = (baseUrl: string, options: Omit<ClientOptions, "baseUrl"> = {}): BackendClient =>
  createClient<BackendPaths>({ credentials: "include", ...options, baseUrl })
