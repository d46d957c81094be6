/**
 * Where `start`'s log records go: logfmt lines on stdout (not a terminal, LOG_FORMAT=logfmt, every
 * command but `start`), the start screen (a terminal), or, in the indexer child of a parent that
 * shows the screen, the parent over the IPC channel, so that one process owns the terminal.
 */
import { Context, Effect, Logger } from "effect"
import type { AppConfigShape } from "../config.js"
import { displayUrl, ansiStyle, plainStyle } from "./render.js"
import { forwardedRecord, fromLoggerOptions, type LogRecord } from "./log-record.js"
import { type ScreenSetup, StartScreen } from "./start-screen.js"
import { PinnedTerminal } from "./terminal.js"

/** The start screen of this process, when it shows one. */
export class Screen extends Context.Tag("predix/Screen")<Screen, StartScreen>() {}

/** Set by a parent showing the screen in its indexer child's environment: send records, do not print them. */
export const LOG_TO_PARENT_ENV = "PREDIX_LOG_TO_PARENT"

export type Output = "logfmt" | "screen" | "parent"

/** The output of `start`: the parent's channel when it asked for records, else the screen on a terminal unless LOG_FORMAT=logfmt. */
export const chooseOutput = (
  logFormat: AppConfigShape["logFormat"],
  context: { readonly stdoutIsTty: boolean; readonly toParent: boolean }
): Output => (context.toParent ? "parent" : logFormat === "auto" && context.stdoutIsTty ? "screen" : "logfmt")

/** `start`'s role, as far as the screen cares: which servers it runs, whether it runs the live devnet. */
export type Role = "all" | "indexer" | "api"

/** What the screen knows at start, from the configuration: what is indexed, the RPC and the bundler. */
export const screenSetup = (config: AppConfigShape, role: Role): ScreenSetup => {
  const rpcUrl = config.rpcUrl._tag === "Some" ? config.rpcUrl.value : undefined
  const liveDevnet = rpcUrl === undefined && config.chain === "devnet" && role !== "api"
  const fixture = rpcUrl === undefined && config.chain === "fixture" && role !== "api"
  return {
    chainId: config.chainId,
    chain: rpcUrl !== undefined ? "RPC_URL" : liveDevnet ? "live devnet" : fixture ? "committed fixture, replayed" : "API only",
    rpc:
      rpcUrl !== undefined
        ? displayUrl(rpcUrl)
        : liveDevnet
          ? "the live devnet (starting)"
          : fixture
            ? "the committed fixture, replayed in the indexer process"
            : "none (RPC_URL unset)",
    bundler:
      config.bundlerUrl._tag === "Some"
        ? displayUrl(config.bundlerUrl.value)
        : liveDevnet && role === "all"
          ? "alto, starting (its URL is logged when it is up)"
          : "none (BUNDLER_URL unset)",
    servers: { indexer: role !== "indexer", backend: role !== "indexer" }
  }
}

/** Sends each record to the parent; a closed channel drops it (the parent is gone, and this process follows it: `stopWithParent`). */
const parentLogger = Logger.make<unknown, void>((options) => {
  try {
    process.send?.({ predixLog: fromLoggerOptions(options) })
  } catch {
    // The channel closed between the check and the send: nobody to show it to.
  }
})

/**
 * Runs `job` with `start`'s output: the screen (provided as `Screen`, closed when the job ends),
 * the parent's channel, or logfmt.
 */
export const withStartOutput =
  (config: AppConfigShape, role: Role) =>
  <A, E, R>(job: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
    const output = chooseOutput(config.logFormat, {
      stdoutIsTty: process.stdout.isTTY === true,
      toParent: process.env[LOG_TO_PARENT_ENV] === "1" && process.send !== undefined
    })
    if (output === "logfmt") return job.pipe(Effect.provide(Logger.logFmt))
    if (output === "parent") return job.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, parentLogger)))
    const style = process.env["NO_COLOR"] ? plainStyle : ansiStyle
    const screen = new StartScreen(screenSetup(config, role), new PinnedTerminal(process.stdout), style)
    const logger = Logger.make<unknown, void>((options) => screen.log(fromLoggerOptions(options)))
    return job.pipe(
      Effect.provideService(Screen, screen),
      Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
      Effect.ensuring(Effect.sync(() => screen.close()))
    )
  }

/** Shows the records an indexer child forwards on this process's screen; the other messages are not ours. */
export const showForwarded = (screen: StartScreen) => (message: unknown) => {
  const record: LogRecord | undefined = forwardedRecord(message)
  if (record !== undefined) screen.log(record)
}
