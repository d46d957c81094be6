/**
 * The backend's typed client: Effect's HttpApiClient over the backend's own definition, so a
 * request and its answer (errors included, decoded into the error classes of
 * `schema/errors.ts`) are typed by the same schemas the server uses.
 *
 *   const client = yield* makeBackendClient("http://127.0.0.1:3000")
 *   const market = yield* client.markets.get({ path: { idOrSlug: "1" }, urlParams: {} })
 */
import { HttpApiClient } from "@effect/platform"
import type { Effect } from "effect"
import { BackendApi } from "./definition.js"

export const makeBackendClient = (baseUrl: string) => HttpApiClient.make(BackendApi, { baseUrl })

export type BackendClient = Effect.Effect.Success<ReturnType<typeof makeBackendClient>>
