/**
 * Runs a process's one Effect to its end, as both entries do (the command line, `main.ts`, and
 * the indexer child, `indexer-child.ts`).
 *
 * Typed failures end the process with their message and exit code 1, not a stack trace.
 *
 * Once the Effect has ended (its scopes closed: servers, children and Postgres stopped), the
 * process ends at once: a timer or socket some library left behind must not hold a stopped
 * service alive (a 20 s stop-timeout timer did, so a supervisor waited that long to restart it).
 */
import { ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { defaultTeardown } from "@effect/platform/Runtime"
import { Console, Effect } from "effect"

const exitWith = (message: string) => Console.error(`predix: ${message}`).pipe(Effect.zipRight(Effect.sync(() => (process.exitCode = 1))))

export const runCommand = <E extends ValidationError.ValidationError | { readonly _tag: string; readonly message: string }>(
  program: Effect.Effect<unknown, E, NodeContext.NodeContext>
) =>
  program.pipe(
    // A command line @effect/cli refused has been explained on the terminal already.
    Effect.catchAll((error: E) =>
      ValidationError.isValidationError(error)
        ? Effect.sync(() => (process.exitCode = 1))
        : exitWith(
            error._tag === "SqlError" ? `database error: ${error.message}: ${String((error as { cause?: unknown }).cause)}` : error.message
          )
    ),
    Effect.provide(NodeContext.layer),
    NodeRuntime.runMain({
      disablePrettyLogger: true,
      teardown: (exit) => defaultTeardown(exit, (code) => process.exit(code === 0 ? Number(process.exitCode ?? 0) : code))
    })
  )
