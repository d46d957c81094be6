/**
 * How a job of the command line gets its configuration and its logging: shared by the main
 * command line (`main.ts`) and the indexer child's entry (`indexer-child.ts`).
 */
import { Duration, Effect, Logger } from "effect"
import { HealingPauseCap } from "../pipeline/healing.js"
import { AppConfig, type AppConfigShape, loadConfig } from "./config.js"
import { withStartOutput } from "./screen/output.js"

/** What one `start` runs: everything (the default), or one side of it (`start --only ...`). */
export type StartRole = "all" | "indexer" | "api"

/** Runs `job` with the configuration loaded, logging as LOG_LEVEL says (logfmt, stable keys). */
export const withConfig = <A, E, R>(job: Effect.Effect<A, E, R | AppConfig>) =>
  Effect.flatMap(loadConfig, (config: AppConfigShape) =>
    job.pipe(Effect.provideService(AppConfig, config), Logger.withMinimumLogLevel(config.logLevel))
  ).pipe(Effect.provide(Logger.logFmt))

/**
 * `withConfig` for `start`: on a terminal (LOG_FORMAT=auto) its records go to the start screen
 * instead of logfmt, and an indexer child's to its parent's screen (src/screen/output.ts).
 */
export const withStartConfig =
  (role: StartRole) =>
  <A, E, R>(job: Effect.Effect<A, E, R | AppConfig>) =>
    Effect.flatMap(loadConfig, (config: AppConfigShape) =>
      job.pipe(
        Effect.provideService(AppConfig, config),
        Effect.provideService(HealingPauseCap, Duration.millis(config.retryMaxMs)),
        Logger.withMinimumLogLevel(config.logLevel),
        withStartOutput(config, role)
      )
    )
