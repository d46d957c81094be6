/**
 * The `predix` command line. `npm start` runs `predix start`.
 */
import { Command, HelpDoc, Options } from "@effect/cli"
import { Duration, Effect, Option } from "effect"
import { writeFile } from "node:fs/promises"
import { exportJob } from "./analytics/command.js"
import { migrate, start } from "./app.js"
import { withConfig, withStartConfig } from "./job-config.js"
import { runCommand } from "./run-command.js"
import { settingsHelpDoc } from "./config/help.js"
import { devnet } from "../tools/devnet/command.js"
import { record, replay } from "./recording-commands.js"
import { reindex } from "./reindex-command.js"
import { generateSynthetic } from "../tools/recording/synthetic.js"

const environmentHelp = HelpDoc.blocks([
  HelpDoc.p(
    "Indexer, backend API and analytics for a binary prediction-market protocol. Configuration comes from these environment variables:"
  ),
  settingsHelpDoc()
])

const startCommand = Command.make(
  "start",
  {
    only: Options.choice("only", ["indexer", "api"]).pipe(
      Options.optional,
      Options.withDescription(
        "run one side only: indexer (the single writer, no HTTP) or api (both APIs, no indexing; any number of them may serve one database)"
      )
    )
  },
  ({ only }) => {
    const role = Option.getOrElse(only, () => "all" as const)
    return withStartConfig(role)(start(role))
  }
).pipe(
  Command.withDescription(
    "Main job: Postgres (embedded unless DATABASE_URL is set), migrations, then the indexer API on INDEXER_PORT and the backend API on BACKEND_PORT, with the indexer in a child process, until SIGINT or SIGTERM."
  )
)

const reindexCommand = Command.make(
  "reindex",
  {
    graceSeconds: Options.integer("grace-seconds").pipe(
      Options.withDefault(600),
      Options.withDescription("how long the generation it replaces stays after the switch, for requests still reading it")
    ),
    dropRetired: Options.boolean("drop-retired").pipe(Options.withDescription("drop the retired generations now, and exit")),
    discard: Options.boolean("discard").pipe(Options.withDescription("drop the generation being built, and exit")),
    detach: Options.boolean("detach").pipe(Options.withDescription("ask for the build and exit, without following it"))
  },
  ({ graceSeconds, ...rest }) => withConfig(reindex({ grace: Duration.seconds(graceSeconds), ...rest }))
).pipe(
  Command.withDescription(
    "Blue-green re-index: the running indexer builds the derived tables again in a new schema from the log store while the current ones serve, then switches the APIs to them in one step (docs/reindex.md)."
  )
)

const migrateCommand = Command.make("migrate", {}, () => withConfig(migrate)).pipe(
  Command.withDescription("Apply pending migrations from migrations/ and exit.")
)

const recordCommand = Command.make(
  "record",
  {
    out: Options.file("out").pipe(Options.withDescription("recording to write or resume (gzip NDJSON)")),
    rpcUrl: Options.text("rpc").pipe(Options.optional, Options.withDescription("JSON-RPC endpoint (default RPC_URL)")),
    deployment: Options.file("deployment").pipe(Options.optional, Options.withDescription("deployment file (default DEPLOYMENT)")),
    fromBlock: Options.integer("from").pipe(Options.optional, Options.withDescription("first block (default deployBlock)")),
    toBlock: Options.integer("to").pipe(Options.optional, Options.withDescription("last block (default the latest)")),
    follow: Options.boolean("follow").pipe(Options.withDescription("keep recording new heads, reorgs included")),
    intervalMs: Options.integer("interval-ms").pipe(Options.withDefault(1000), Options.withDescription("polling interval with --follow"))
  },
  (args) => withConfig(record(args))
).pipe(
  Command.withDescription("Record a block range (headers and the deployment's logs) from a JSON-RPC endpoint; resumes an existing file.")
)

const replayCommand = Command.make(
  "replay",
  {
    recording: Options.file("recording").pipe(Options.withDescription("recording to serve")),
    port: Options.integer("port").pipe(Options.withDefault(8545), Options.withDescription("loopback port (0 = any free port)")),
    blocksPerSecond: Options.integer("blocks-per-second").pipe(
      Options.optional,
      Options.withDescription("play heads at this pace (default: everything at once)")
    ),
    finalityDepth: Options.integer("finality-depth").pipe(
      Options.withDefault(12),
      Options.withDescription("finalized = head - depth, unless the recording names finalized blocks")
    )
  },
  (args) => withConfig(replay(args))
).pipe(Command.withDescription("Serve a recording over JSON-RPC as a node would, reorgs included."))

const syntheticCommand = Command.make(
  "synthetic",
  {
    out: Options.file("out").pipe(Options.withDescription("recording to write (gzip NDJSON)")),
    events: Options.integer("events").pipe(Options.withDefault(1_000_000), Options.withDescription("logs to generate")),
    seed: Options.integer("seed").pipe(Options.withDefault(1), Options.withDescription("same seed, same recording"))
  },
  ({ out, events, seed }) =>
    Effect.promise(async () => {
      const summary = await generateSynthetic({ out, events, seed })
      // The deployment the recording was generated for, ready for DEPLOYMENT.
      const deploymentFile = `${out.replace(/\.ndjson\.gz$/, "")}.deployment.json`
      await writeFile(deploymentFile, `${JSON.stringify(summary.deployment, null, 2)}\n`)
      return { summary, deploymentFile }
    }).pipe(
      Effect.flatMap(({ summary: s, deploymentFile }) =>
        Effect.logInfo("synthetic recording written").pipe(
          Effect.annotateLogs({
            out,
            deployment: deploymentFile,
            blocks: s.blocks,
            events: s.logs,
            orphaned_events: s.orphanedLogs,
            reorgs: s.reorgs,
            markets: s.markets
          })
        )
      ),
      withConfig
    )
).pipe(Command.withDescription("Generate a large, internally consistent synthetic recording (with reorgs) for benchmarks."))

const devnetCommand = Command.make(
  "devnet",
  {
    seed: Options.integer("seed").pipe(Options.withDefault(1), Options.withDescription("scenario seed: the same seed gives the same logs")),
    steps: Options.integer("steps").pipe(Options.withDefault(300), Options.withDescription("actions in the scenario's trading loop")),
    deployment: Options.file("deployment").pipe(
      Options.withDefault(".data/devnet/deployment.json"),
      Options.withDescription("where to write the deployment file")
    ),
    record: Options.file("record").pipe(Options.optional, Options.withDescription("record the chain (reorgs included) to this file")),
    port: Options.integer("port").pipe(Options.withDefault(8545), Options.withDescription("anvil's loopback port (0 = any free port)")),
    deployedVariants: Options.boolean("deployed-variants").pipe(
      Options.withDescription("emit the deployed contracts' event variants (protocol-facts section 7) instead of the spec's")
    ),
    follow: Options.boolean("follow").pipe(Options.withDescription("after the scenario, keep trading as a live chain until interrupted")),
    liveState: Options.file("live-state").pipe(
      Options.optional,
      Options.withDescription(
        "after the scenario, add the live devnet's contracts and write anvil's state (gzip JSON) here, with its .live.json manifest"
      )
    ),
    fixture: Options.boolean("fixture").pipe(
      Options.withDescription("regenerate the committed fixture (fixtures/devnet.*: seed 1, 400 steps, with the live state) and stop")
    )
  },
  (args) => withConfig(devnet(args))
).pipe(
  Command.withDescription(
    "Start anvil (chain id 130), deploy the protocol's contracts, run a seeded scenario (every event, reorgs included), optionally record it."
  )
)

const exportCommand = Command.make(
  "export",
  {
    out: Options.file("out").pipe(Options.withDescription("DuckDB file to write, or to refresh when it holds an earlier snapshot")),
    parquet: Options.directory("parquet").pipe(
      Options.optional,
      Options.withDescription("also write one Parquet file per table into this directory")
    ),
    includeUnfinalized: Options.boolean("include-unfinalized").pipe(
      Options.withDescription("snapshot the indexed tip instead of the finalized block")
    ),
    full: Options.boolean("full").pipe(Options.withDescription("write a full export even when --out could be refreshed incrementally"))
  },
  (args) => withConfig(exportJob(args))
).pipe(
  Command.withDescription(
    "Snapshot the index (finalized blocks) into a DuckDB file, atomically, from the running service's database (embedded or DATABASE_URL) without stopping it; refreshes an existing snapshot incrementally."
  )
)

const root = Command.make("predix").pipe(
  Command.withDescription(environmentHelp),
  Command.withSubcommands([
    startCommand,
    reindexCommand,
    migrateCommand,
    recordCommand,
    replayCommand,
    syntheticCommand,
    devnetCommand,
    exportCommand
  ])
)

const cli = Command.run(root, { name: "predix", version: "0.1.0" })

runCommand(cli(process.argv))
