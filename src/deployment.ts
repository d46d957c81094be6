/**
 * Reads and checks the deployment file named by DEPLOYMENT. A missing file, bad JSON, a
 * malformed address or a chain id other than CHAIN_ID stops the start with a message naming
 * DEPLOYMENT, the file and the field.
 */
import { Effect, ParseResult, Schema } from "effect"
import * as fs from "node:fs/promises"
import { Deployment } from "../schema/deployment.js"
import { ConfigurationError } from "./config.js"

const invalid = (path: string, what: string) => new ConfigurationError({ message: `invalid configuration\nDEPLOYMENT: ${path}: ${what}` })

export const loadDeployment = (path: string, chainId: number): Effect.Effect<Deployment, ConfigurationError> =>
  Effect.gen(function* () {
    const text = yield* Effect.tryPromise({
      try: () => fs.readFile(path, "utf8"),
      catch: (cause) => invalid(path, `cannot read the file (${(cause as NodeJS.ErrnoException).code ?? String(cause)})`)
    })
    const json = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: (cause) => invalid(path, `not JSON: ${(cause as Error).message}`)
    })
    const deployment = yield* Schema.decodeUnknown(Deployment, { errors: "all" })(json).pipe(
      Effect.mapError((error) => invalid(path, ParseResult.TreeFormatter.formatErrorSync(error)))
    )
    if (deployment.chainId !== undefined && deployment.chainId !== chainId) {
      return yield* invalid(path, `chainId is ${deployment.chainId} but CHAIN_ID is ${chainId}`)
    }
    return deployment
  })
