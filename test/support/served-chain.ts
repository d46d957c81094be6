/**
 * A synthetic chain (seeded, with reorgs) recorded into a temporary folder, replayed whole and
 * served over JSON-RPC on loopback, with its deployment file: what `predix start` needs
 * (RPC_URL, DEPLOYMENT) to index a chain of a chosen size. Everything goes with the scope.
 */
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { FIXTURE_RECORDING } from "../../src/fixture-recording.js"
import { generateSynthetic, type SyntheticOptions } from "../../tools/recording/synthetic.js"
import { ReplayChain } from "../../tools/replay/chain.js"
import { serveReplay } from "../../tools/replay/server.js"

/** `chain` served over JSON-RPC on loopback while the scope lasts (it answers from the chain's state at each request). */
export const servedReplay = (chain: ReplayChain) =>
  Effect.acquireRelease(
    Effect.promise(() => serveReplay(chain)),
    (s) => Effect.promise(() => s.close())
  )

/** The committed fixture, loaded at its recording's start and served while the scope lasts. */
export const servedFixture = Effect.gen(function* () {
  const live = yield* Effect.promise(() => ReplayChain.load(FIXTURE_RECORDING))
  const server = yield* servedReplay(live)
  return { live, server }
})

/**
 * The committed fixture advanced by `fraction` of its remaining blocks, served while the scope
 * lasts, and its deployment file written in `dir`: a `predix start` on it (`startedOn`) has a head
 * to reach and blocks left to follow.
 */
export const servedFixtureAt = (dir: string, fraction: number) =>
  Effect.gen(function* () {
    const chain = yield* Effect.promise(() => ReplayChain.load(FIXTURE_RECORDING))
    chain.advance(Math.floor(chain.remaining * fraction))
    const deploymentFile = Path.join(dir, "deployment.json")
    yield* Effect.promise(() => fs.writeFile(deploymentFile, JSON.stringify(chain.meta.deployment)))
    const server = yield* servedReplay(chain)
    return { chain, server, deploymentFile }
  })

/** The environment of a `predix start` on a served chain (`servedFixtureAt`) and the database at `url`, logging at info. */
export const startEnv = (
  url: string,
  served: { readonly server: { readonly url: string }; readonly deploymentFile: string },
  indexerPort: number,
  backendPort: number
): Record<string, string> => ({
  DATABASE_URL: url,
  RPC_URL: served.server.url,
  DEPLOYMENT: served.deploymentFile,
  INDEXER_PORT: String(indexerPort),
  BACKEND_PORT: String(backendPort),
  LOG_LEVEL: "info"
})

export const servedSyntheticChain = (options: Omit<SyntheticOptions, "out">) =>
  Effect.gen(function* () {
    const dir = yield* Effect.acquireRelease(
      Effect.promise(() => fs.mkdtemp(Path.join(os.tmpdir(), "predix-chain-"))),
      (d) => Effect.promise(() => fs.rm(d, { recursive: true, force: true }))
    )
    const out = Path.join(dir, "chain.ndjson.gz")
    const summary = yield* Effect.promise(() => generateSynthetic({ ...options, out }))
    const deploymentFile = Path.join(dir, "deployment.json")
    yield* Effect.promise(() => fs.writeFile(deploymentFile, JSON.stringify(summary.deployment)))
    const chain = yield* Effect.promise(() => ReplayChain.load(out))
    chain.advanceAll()
    const server = yield* servedReplay(chain)
    return { chain, server, deploymentFile, summary }
  })
