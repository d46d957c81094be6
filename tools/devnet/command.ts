/**
 * The `devnet` job behind the command line: runs the devnet and, with --follow, keeps it alive
 * (trading) until the process is interrupted; anvil stops with the scope either way.
 */
import { Data, Effect, Option, Runtime } from "effect"
import * as Path from "node:path"
import { FIXTURE, runDevnet } from "./run.js"

export class DevnetFailed extends Data.TaggedError("DevnetFailed")<{ readonly message: string }> {}

export interface DevnetArgs {
  readonly seed: number
  readonly steps: number
  readonly deployment: string
  readonly record: Option.Option<string>
  readonly port: number
  readonly deployedVariants: boolean
  readonly follow: boolean
  readonly liveState: Option.Option<string>
  /** Regenerate the committed fixture (its seed, steps and paths win over the other options). */
  readonly fixture: boolean
}

export const devnet = (given: DevnetArgs) =>
  Effect.gen(function* () {
    const args: DevnetArgs = given.fixture
      ? {
          ...given,
          seed: FIXTURE.seed,
          steps: FIXTURE.steps,
          record: Option.some(FIXTURE.record),
          deployment: FIXTURE.deployment,
          port: 0,
          follow: false,
          liveState: Option.some(FIXTURE.liveState)
        }
      : given
    const controller = new AbortController()
    yield* Effect.addFinalizer(() => Effect.sync(() => controller.abort()))
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const log = (line: string) => void runFork(Effect.logDebug(line))
    const started = runDevnet({
      seed: args.seed,
      steps: args.steps,
      deploymentFile: Path.resolve(args.deployment),
      record: Option.getOrUndefined(Option.map(args.record, (file) => Path.resolve(file))),
      port: args.port === 0 ? undefined : args.port,
      deployedVariants: args.deployedVariants,
      follow: false,
      liveState: Option.getOrUndefined(Option.map(args.liveState, (file) => Path.resolve(file))),
      log
    })
    const result = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => started,
        catch: (cause) => new DevnetFailed({ message: `devnet: ${(cause as Error).message ?? String(cause)}` })
      }),
      (r) => Effect.promise(() => r.anvil.stop())
    )
    const s = result.summary
    yield* Effect.logInfo("devnet scenario done").pipe(
      Effect.annotateLogs({
        rpc_url: result.anvil.url,
        deployment: args.deployment,
        markets: s.markets,
        users: s.users,
        transactions: s.transactions,
        refused: s.refused,
        reorgs: s.reorgs.map((r) => r.depth).join(","),
        ...(Option.isSome(args.record) ? { recording: args.record.value } : {})
      })
    )
    if (!args.follow) return
    yield* Effect.logInfo("following: a live chain until interrupted").pipe(
      Effect.annotateLogs({ RPC_URL: result.anvil.url, DEPLOYMENT: args.deployment })
    )
    const { followTrading } = yield* Effect.promise(() => import("./scenario.js"))
    const { DevnetClient } = yield* Effect.promise(() => import("./client.js"))
    const { compileContracts } = yield* Effect.promise(() => import("./compile.js"))
    const client = new DevnetClient(result.anvil.url, compileContracts())
    yield* Effect.tryPromise({
      try: () => followTrading(client, result.devnet, { seed: args.seed + 1, stop: controller.signal, log }),
      catch: (cause) => new DevnetFailed({ message: `devnet: ${(cause as Error).message ?? String(cause)}` })
    })
  }).pipe(Effect.scoped)
