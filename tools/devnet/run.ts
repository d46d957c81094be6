/**
 * The `devnet` command's work: anvil up, contracts compiled and deployed, the deployment file
 * written, the seeded scenario run (recorded as it happens when asked, reorgs included), then
 * either stop or keep trading as a live chain (`follow`).
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import { Recorder } from "../recording/recorder.js"
import { startAnvil, type Anvil } from "./anvil.js"
import { DevnetClient } from "./client.js"
import { compileContracts } from "./compile.js"
import { deployDevnet, type Devnet } from "./deploy.js"
import { writeLiveState } from "./live-state.js"
import { followTrading, runScenario, type ScenarioSummary } from "./scenario.js"

/** The committed fixture: what `npm run fixture` (predix devnet --fixture) regenerates. */
export const FIXTURE = {
  seed: 1,
  steps: 400,
  record: "fixtures/devnet.ndjson.gz",
  deployment: "fixtures/devnet.deployment.json",
  liveState: "fixtures/devnet.anvil-state.json.gz"
} as const

export interface DevnetOptions {
  readonly seed: number
  readonly steps: number
  readonly deploymentFile: string
  readonly record?: string | undefined
  readonly port?: number | undefined
  readonly deployedVariants?: boolean | undefined
  readonly follow?: boolean | undefined
  /** After the scenario, add the live contracts and write the anvil state here (`live-state.ts`). */
  readonly liveState?: string | undefined
  readonly log?: (line: string) => void
  /** Resolves when a follow run should stop (SIGINT in the CLI). */
  readonly stopSignal?: AbortSignal | undefined
}

export interface DevnetResult {
  readonly anvil: Anvil
  readonly devnet: Devnet
  readonly summary: ScenarioSummary
}

const writeJson = (file: string, value: unknown) => {
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`)
}

/** Runs the devnet; the caller owns `anvil` in the result and stops it. */
export const runDevnet = async (options: DevnetOptions): Promise<DevnetResult> => {
  const log = options.log ?? (() => {})
  const artifacts = compileContracts()
  const anvil = await startAnvil(options.port === undefined ? {} : { port: options.port })
  try {
    const client = new DevnetClient(anvil.url, artifacts)
    const devnet = await deployDevnet(client, { deployedVariants: options.deployedVariants ?? false })
    writeJson(options.deploymentFile, devnet.deployment)
    log(`deployed at block ${devnet.deployment.deployBlock}; deployment written to ${options.deploymentFile}`)
    // A recording belongs to one chain: a new devnet starts a new file, never resumes an old one.
    if (options.record !== undefined) rmSync(options.record, { force: true })
    const recorder =
      options.record === undefined
        ? undefined
        : await Recorder.open({
            rpcUrl: anvil.url,
            deployment: devnet.deployment,
            out: options.record,
            source: `devnet seed=${options.seed}`
          })
    const poll = async () => {
      await recorder?.poll()
    }
    const summary = await runScenario(client, devnet, { seed: options.seed, steps: options.steps, beforeReorg: poll, log })
    await recorder?.close()
    if (options.liveState !== undefined) {
      const manifest = await writeLiveState(client, devnet, options.liveState)
      log(
        `live state written to ${options.liveState} (scenario head ${manifest.scenarioHead.number}, state head ${manifest.stateHead.number})`
      )
    }
    if (options.follow === true) await followTrading(client, devnet, { seed: options.seed + 1, stop: options.stopSignal, log })
    return { anvil, devnet, summary }
  } catch (error) {
    await anvil.stop()
    throw error
  }
}
