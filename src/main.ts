/**
 * The `predix` command line. `npm start` runs `predix start`.
 */
import { Command, HelpDoc, Span, ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"
import { migrate, start, withConfig } from "./app.js"
import { settings } from "./config.js"

const environmentHelp = HelpDoc.blocks([
  HelpDoc.p(
    "Indexer, backend API and analytics for a binary prediction-market protocol. Configuration comes from these environment variables:"
  ),
  HelpDoc.descriptionList(
    settings.map((s) => [Span.text(s.name), HelpDoc.p(`${s.description}. Default: ${s.defaultText}`)] as [Span.Span, HelpDoc.HelpDoc]) as [
      [Span.Span, HelpDoc.HelpDoc],
      ...Array<[Span.Span, HelpDoc.HelpDoc]>
    ]
  )
])

const startCommand = Command.make("start", {}, () => withConfig(start)).pipe(
  Command.withDescription(
    "Main job: Postgres (embedded unless DATABASE_URL is set), migrations, then the indexer API on INDEXER_PORT and the backend API on BACKEND_PORT until SIGINT or SIGTERM."
  )
)

const migrateCommand = Command.make("migrate", {}, () => withConfig(migrate)).pipe(
  Command.withDescription("Apply pending migrations from migrations/ and exit.")
)

const root = Command.make("predix").pipe(
  Command.withDescription(environmentHelp),
  Command.withSubcommands([startCommand, migrateCommand])
)

const cli = Command.run(root, { name: "predix", version: "0.1.0" })

const exitWith = (message: string) =>
  Console.error(`predix: ${message}`).pipe(Effect.zipRight(Effect.sync(() => (process.exitCode = 1))))

/** Typed failures end the process with their message and exit code 1, not a stack trace. */
cli(process.argv).pipe(
  Effect.catchIf(ValidationError.isValidationError, () => Effect.sync(() => (process.exitCode = 1))),
  Effect.catchAll((error) =>
    exitWith(error._tag === "SqlError" ? `database error: ${error.message}: ${String(error.cause)}` : error.message)
  ),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
