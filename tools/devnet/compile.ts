/**
 * Compiles the devnet's Solidity (tools/devnet/contracts/*.sol plus the generated event interfaces)
 * with solc-js from npm: no network, no native compiler. The result is cached under
 * node_modules/.cache/predix-devnet by a hash of the sources, the compiler version and the
 * settings, so only the first run of a checkout pays the compile (solc-js is slow). The version
 * in the key is the solc package's (solc-js publishes each compiler release as the npm version
 * of the same number): a cache hit never loads the compiler itself, whose few megabytes of
 * Emscripten JavaScript take seconds to load, in every process that builds a devnet.
 */
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import type { Abi, Hex } from "viem"
import { eventsSource } from "./events-sol.js"
import { PROJECT_ROOT } from "../../schema/io/project-root.js"

export interface Artifact {
  readonly abi: Abi
  readonly bytecode: Hex
}
export type Artifacts = Readonly<Record<string, Artifact>>

const root = PROJECT_ROOT
export const CONTRACTS_DIR = join(root, "tools/devnet/contracts")
const CACHE_DIR = join(root, "node_modules/.cache/predix-devnet")

const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: "cancun",
  outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } }
} as const

export class CompileError extends Error {
  override readonly name = "CompileError"
}

const sources = (): Record<string, { content: string }> => {
  const files: Record<string, { content: string }> = { "Events.sol": { content: eventsSource() } }
  for (const file of readdirSync(CONTRACTS_DIR)
    .filter((f) => f.endsWith(".sol"))
    .sort()) {
    files[file] = { content: readFileSync(join(CONTRACTS_DIR, file), "utf8") }
  }
  return files
}

interface SolcOutput {
  readonly errors?: ReadonlyArray<{ severity: string; formattedMessage: string }>
  readonly contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>
}

/** Every contract with bytecode, by contract name (names are unique across files). */
export const compileContracts = (): Artifacts => {
  const require = createRequire(import.meta.url)
  const input = { language: "Solidity", sources: sources(), settings: SETTINGS }
  const text = JSON.stringify(input)
  const version = (require("solc/package.json") as { version: string }).version
  const key = createHash("sha256").update(version).update(text).digest("hex").slice(0, 24)
  const cached = join(CACHE_DIR, `${key}.json`)
  if (existsSync(cached)) return JSON.parse(readFileSync(cached, "utf8")) as Artifacts

  const solc = require("solc") as { version(): string; compile(input: string): string }
  // The key's version is the compiler's: a package whose compiler is another release is refused.
  if (!solc.version().startsWith(`${version}+`)) throw new CompileError(`solc package ${version} holds compiler ${solc.version()}`)
  const output = JSON.parse(solc.compile(text)) as SolcOutput
  const errors = (output.errors ?? []).filter((e) => e.severity === "error")
  if (errors.length > 0) throw new CompileError(errors.map((e) => e.formattedMessage).join("\n"))
  const artifacts: Record<string, Artifact> = {}
  for (const contracts of Object.values(output.contracts ?? {})) {
    for (const [name, c] of Object.entries(contracts)) {
      if (c.evm.bytecode.object.length === 0) continue
      if (name in artifacts) throw new CompileError(`two contracts are named ${name}`)
      artifacts[name] = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` }
    }
  }
  mkdirSync(CACHE_DIR, { recursive: true })
  const temporary = `${cached}.${process.pid}.tmp`
  writeFileSync(temporary, JSON.stringify(artifacts))
  renameSync(temporary, cached)
  return artifacts
}
