/**
 * The `record` and `replay` jobs behind the command line.
 */
import { Data, Effect, Option } from "effect"
import * as Path from "node:path"
import { AppConfig, ConfigurationError } from "./config.js"
import { loadDeployment } from "./deployment.js"
import { ReplayChain } from "../tools/replay/chain.js"
import { serveReplay } from "../tools/replay/server.js"
import { backoff } from "../pipeline/source/rpc.js"
import { Recorder, ReorgBeyondWindow } from "../tools/recording/recorder.js"

export interface RecordArgs {
  readonly out: string
  readonly rpcUrl: Option.Option<string>
  readonly deployment: Option.Option<string>
  readonly fromBlock: Option.Option<number>
  readonly toBlock: Option.Option<number>
  readonly follow: boolean
  readonly intervalMs: number
}

const missing = (what: string) => new ConfigurationError({ message: `invalid configuration\n${what}` })

/** Progress on stderr when it is a terminal: one line rewritten in place. */
const progressLine = (p: { block: number; target: number; blocksPerSecond: number; logs: number }) => {
  if (!process.stderr.isTTY) return
  const eta = p.blocksPerSecond > 0 ? Math.round((p.target - p.block) / p.blocksPerSecond) : 0
  process.stderr.write(`\rblock ${p.block}/${p.target}  ${p.blocksPerSecond.toFixed(0)} blocks/s  ${p.logs} logs  eta ${eta}s   `)
}

export const record = (args: RecordArgs) =>
  Effect.gen(function* () {
    const config = yield* AppConfig
    const rpcUrl = Option.orElse(args.rpcUrl, () => config.rpcUrl)
    if (Option.isNone(rpcUrl)) return yield* missing("RPC_URL: record needs an endpoint (--rpc or RPC_URL)")
    const deploymentPath = Option.orElse(args.deployment, () => config.deploymentPath)
    if (Option.isNone(deploymentPath)) return yield* missing("DEPLOYMENT: record needs a deployment file (--deployment or DEPLOYMENT)")
    const deployment = yield* loadDeployment(deploymentPath.value, config.chainId)
    const recorder = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          Recorder.open({
            rpcUrl: rpcUrl.value,
            deployment,
            out: Path.resolve(args.out),
            ...Option.match(args.fromBlock, { onNone: () => ({}), onSome: (fromBlock) => ({ fromBlock }) }),
            onProgress: progressLine
          }),
        catch: (cause) => new RecordFailed({ message: String((cause as Error).message ?? cause) })
      }),
      (r) => Effect.promise(() => r.close())
    )
    const poll = (target?: number) =>
      Effect.tryPromise({
        try: () => recorder.poll(target),
        catch: (cause) =>
          new RecordFailed({ message: String((cause as Error).message ?? cause), final: cause instanceof ReorgBeyondWindow })
      })
    /**
     * Following, an endpoint outage of any length is waited out: each failed poll is logged and
     * tried again after the next pause of `backoff` (from 100 ms, doubling, at most 5 s). Only a
     * reorg beyond the recorder's window stops it.
     */
    const healing = (target?: number) =>
      Effect.suspend(() => {
        let attempt = 0
        return poll(target).pipe(
          Effect.tapError((error) =>
            error.final
              ? Effect.void
              : Effect.logWarning("recording failed; retrying").pipe(Effect.annotateLogs({ attempt: ++attempt, error: error.message }))
          ),
          Effect.retry({ schedule: backoff, while: (error) => !error.final })
        )
      })
    const recorded = Effect.suspend(() =>
      Effect.logInfo("recorded").pipe(Effect.annotateLogs({ block: recorder.recordedTip, out: args.out }))
    )
    yield* (args.follow ? healing : poll)(Option.getOrUndefined(args.toBlock))
    yield* recorded
    if (args.follow) {
      for (;;) {
        yield* Effect.sleep(args.intervalMs)
        const before = recorder.recordedTip
        yield* healing()
        if (recorder.recordedTip !== before) yield* recorded
      }
    }
  }).pipe(Effect.scoped)

/** A recording or replay that could not go on; the message says why. `final`: no retry can help. */
export class RecordFailed extends Data.TaggedError("RecordFailed")<{ readonly message: string; readonly final?: boolean }> {}

export interface ReplayArgs {
  readonly recording: string
  readonly port: number
  readonly blocksPerSecond: Option.Option<number>
  readonly finalityDepth: number
}

/** Serves a recording over JSON-RPC until interrupted. */
export const replay = (args: ReplayArgs) =>
  Effect.gen(function* () {
    const config = yield* AppConfig
    const chain = yield* Effect.tryPromise({
      try: () => ReplayChain.load(Path.resolve(args.recording), { finalityDepth: args.finalityDepth }),
      catch: (cause) => new RecordFailed({ message: `cannot load ${args.recording}: ${(cause as Error).message}` })
    })
    if (Option.isNone(args.blocksPerSecond)) chain.advanceAll()
    const server = yield* Effect.acquireRelease(
      Effect.promise(() =>
        serveReplay(chain, {
          host: config.host,
          port: args.port,
          ...Option.match(args.blocksPerSecond, { onNone: () => ({}), onSome: (blocksPerSecond) => ({ blocksPerSecond }) })
        })
      ),
      (s) => Effect.promise(() => s.close())
    )
    yield* Effect.logInfo("replaying").pipe(
      Effect.annotateLogs({ url: server.url, chain_id: chain.chainId, head: chain.headNumber, remaining: chain.remaining })
    )
    return yield* Effect.never
  }).pipe(Effect.scoped)
