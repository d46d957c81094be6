/**
 * CORS for the indexer API: a public, read-only API that any web page may read. Every answer
 * allows any origin, without credentials (no cookies or auth are read, so none are invited), and
 * lets scripts read the freshness headers; a preflight (`OPTIONS`) is answered 204 for GET.
 */
import { HttpServerResponse } from "@effect/platform"
import { FRESHNESS_HEADER_NAMES } from "./freshness.js"

export const CORS_HEADERS = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": FRESHNESS_HEADER_NAMES.join(", ")
} as const

/** The answer to a CORS preflight: GET (and HEAD) from anywhere, cached by the browser for a day. */
export const preflight = () =>
  HttpServerResponse.empty({ status: 204 }).pipe(
    HttpServerResponse.setHeaders({
      ...CORS_HEADERS,
      "access-control-allow-methods": "GET, HEAD, OPTIONS",
      // Any header a script adds (the wildcard is valid without credentials); nothing is echoed.
      "access-control-allow-headers": "*",
      "access-control-max-age": "86400"
    })
  )

/** Adds the CORS headers to an answer. */
export const withCorsHeaders = (response: HttpServerResponse.HttpServerResponse) => HttpServerResponse.setHeaders(response, CORS_HEADERS)
