/**
 * Backends for the session and rate-limit tests: one scratch, migrated database (no chain data is
 * needed) and any number of backend instances on it, each with its own configuration and its own
 * clock (a real clock moved by an offset: what the instance believes the time is). Answers are
 * checked against the published OpenAPI document like the main harness does.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { HttpServer } from "@effect/platform"
import { Clock, Context, Duration, Effect, Exit, Layer, Logger, LogLevel, Redacted, Scope } from "effect"
import { createServer } from "node:http"
import type { Hex, LocalAccount } from "viem"
import { backendHttpLayer, type BackendOptions } from "../../../../http/backend/api.js"
import { httpServerWithRealtime } from "../../../../http/ws/server.js"
import { SessionsRealtime } from "../../../../http/ws/sessions.js"
import { BuildInfoLive } from "../../../../src/build-info.js"
import { pgClientLayer } from "../../../../src/db/database.js"
import { runMigrations } from "../../../../src/db/migrations.js"
import { seedDisplayMetadataFrom } from "../../../../src/display-metadata.js"
import { fixtureDatabaseUrl } from "../../../support/fixture-db.js"
import { migratedDatabaseUrl, query } from "../../../support/postgres.js"
import { conformance, NO_RATE_LIMITS, type Answer } from "./harness.js"

/** A clock `offsetMs` away from the real one; tests move it. */
export class ShiftedClock implements Clock.Clock {
  readonly [Clock.ClockTypeId]: Clock.ClockTypeId = Clock.ClockTypeId
  offsetMs = 0
  private readonly base = Clock.make()
  unsafeCurrentTimeMillis(): number {
    return Date.now() + this.offsetMs
  }
  unsafeCurrentTimeNanos(): bigint {
    return BigInt(this.unsafeCurrentTimeMillis()) * 1_000_000n
  }
  readonly currentTimeMillis = Effect.sync(() => this.unsafeCurrentTimeMillis())
  readonly currentTimeNanos = Effect.sync(() => this.unsafeCurrentTimeNanos())
  sleep(duration: Duration.Duration) {
    return this.base.sleep(duration)
  }
}

export interface Instance {
  readonly url: string
  /** Every log line of this instance (message and annotations as JSON). */
  readonly logs: Array<string>
  readonly clock: ShiftedClock
  readonly call: (method: string, path: string, options?: { body?: unknown; headers?: Record<string, string> }) => Promise<Answer>
  readonly close: () => Promise<void>
}

export interface Backends {
  readonly databaseUrl: string
  readonly start: (
    options?: Partial<Omit<BackendOptions, "indexerUrl" | "chainId">> & { readonly chainId?: number; readonly realtime?: boolean }
  ) => Promise<Instance>
  readonly sql: <R extends Record<string, any> = Record<string, any>>(text: string, values?: Array<unknown>) => Promise<Array<R>>
  readonly close: () => Promise<void>
}

const quiet = Logger.withMinimumLogLevel(LogLevel.Error)

/** `indexed`: a copy of the indexed fixture (markets to comment on, display metadata seeded) instead of an empty migrated database. */
export const startBackends = async (options: { readonly indexed?: boolean } = {}): Promise<Backends> => {
  const scope = Effect.runSync(Scope.make())
  const databaseUrl =
    options.indexed === true
      ? (await Effect.runPromise(Scope.extend(fixtureDatabaseUrl, scope).pipe(quiet))).url
      : await Effect.runPromise(Scope.extend(migratedDatabaseUrl, scope))
  const database = pgClientLayer(Redacted.make(databaseUrl))
  await Effect.runPromise(runMigrations().pipe(Effect.provide(database), quiet))
  if (options.indexed === true) await Effect.runPromise(seedDisplayMetadataFrom().pipe(Effect.provide(database), quiet))
  let document: Parameters<typeof conformance>[0] | undefined

  const start: Backends["start"] = async (options = {}) => {
    const clock = new ShiftedClock()
    const instanceScope = await Effect.runPromise(Scope.fork(scope, { _tag: "Sequential" } as never))
    const { realtime, ...backendOptions } = options
    const auth = { publicUrl: "http://localhost:3000", ...backendOptions.auth, chainId: backendOptions.chainId ?? 130 }
    // With `realtime`: the backend's own server, the stream on its upgrades, with the real sessions (as `predix start` serves them).
    const server =
      realtime === true
        ? httpServerWithRealtime({ port: 0, host: "127.0.0.1" }, { chainId: auth.chainId, checkEveryMs: 60_000 }).pipe(
            Layer.provide(SessionsRealtime(auth))
          )
        : NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })
    const layer = backendHttpLayer({ chainId: 130, indexerUrl: "http://127.0.0.1:9", rateLimits: NO_RATE_LIMITS, ...backendOptions }).pipe(
      Layer.provideMerge(server),
      Layer.provide([database, BuildInfoLive])
    )
    const logs: Array<string> = []
    const capture = Logger.make(({ message, annotations, cause }) => {
      logs.push(JSON.stringify({ message, annotations: Object.fromEntries(annotations), cause: String(cause) }))
    })
    const context = await Effect.runPromise(
      Layer.buildWithScope(layer, instanceScope).pipe(
        Effect.withClock(clock),
        Effect.provide(Logger.replace(Logger.defaultLogger, capture)),
        Logger.withMinimumLogLevel(LogLevel.All)
      )
    )
    const address = Context.get(context, HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
    const url = `http://127.0.0.1:${address.port}`
    document ??= (await (await fetch(`${url}/api/openapi.json`)).json()) as Parameters<typeof conformance>[0]
    const call: Instance["call"] = async (method, path, callOptions = {}) => {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { ...(callOptions.body === undefined ? {} : { "content-type": "application/json" }), ...callOptions.headers },
        ...(callOptions.body === undefined
          ? {}
          : { body: typeof callOptions.body === "string" ? callOptions.body : JSON.stringify(callOptions.body) })
      })
      const text = await response.text()
      let body: unknown
      try {
        body = JSON.parse(text)
      } catch {
        throw new Error(`${method} ${path}: answered ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`)
      }
      const answer = { status: response.status, body, headers: response.headers }
      const problems = conformance(document!, method, new URL(path, url).pathname, answer)
      if (problems.length > 0)
        throw new Error(`${method} ${path} does not conform to the published OpenAPI document:\n${problems.slice(0, 20).join("\n")}`)
      return answer
    }
    return { url, logs, clock, call, close: () => Effect.runPromise(Scope.close(instanceScope, Exit.void)) }
  }

  return {
    databaseUrl,
    start,
    sql: async <R extends Record<string, any>>(text: string, values: Array<unknown> = []) =>
      (await Effect.runPromise(query(databaseUrl, text, values))).rows as Array<R>,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** The `predix_session` value of a Set-Cookie header, or undefined. */
export const sessionCookieOf = (answer: Answer): string | undefined => {
  const header = answer.headers.getSetCookie().find((c) => c.startsWith("predix_session="))
  return header === undefined ? undefined : header.slice("predix_session=".length).split(";")[0]
}

/** Challenge, sign with `account`, verify: the verify answer and its cookie. */
export const signIn = async (
  instance: Instance,
  account: LocalAccount,
  options: { readonly sign?: (message: string) => Promise<Hex>; readonly as?: string } = {}
) => {
  const address = options.as ?? account.address
  const challenge = await instance.call("GET", `/api/auth/challenge?address=${address}`)
  if (challenge.status !== 200) throw new Error(`challenge: ${challenge.status} ${JSON.stringify(challenge.body)}`)
  const message: string = challenge.body.data.message
  const signature = options.sign === undefined ? await account.signMessage({ message }) : await options.sign(message)
  const verify = await instance.call("POST", "/api/auth/verify", { body: { address, signature } })
  return { challenge, message, signature, verify, cookie: sessionCookieOf(verify) }
}
