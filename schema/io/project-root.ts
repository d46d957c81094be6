/**
 * Where the project's files are (migrations, fixtures, devnet contracts, package.json), found
 * from this module's own location, whether it runs from its source file (through tsx) or from
 * the compiled bundle in `.build/` (`npm start`, `bin/build.mjs`): the nearest folder upwards
 * that holds this package's package.json.
 */
import * as fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const PACKAGE_NAME = "predix-indexer"

const findRoot = (from: string): string => {
  for (let dir = from; ; dir = Path.dirname(dir)) {
    try {
      const manifest = JSON.parse(fs.readFileSync(Path.join(dir, "package.json"), "utf8")) as { name?: unknown }
      if (manifest.name === PACKAGE_NAME) return dir
    } catch {
      // no package.json here (or not ours): keep walking up
    }
    if (Path.dirname(dir) === dir) throw new Error(`cannot find the ${PACKAGE_NAME} package above ${from}`)
  }
}

export const PROJECT_ROOT = findRoot(Path.dirname(fileURLToPath(import.meta.url)))

/**
 * True when this code runs from the compiled bundle rather than its TypeScript sources: then
 * the keeper and the backfill thread's entry are compiled files beside it, and no child needs tsx.
 */
export const RUNS_COMPILED = !fileURLToPath(import.meta.url).endsWith(".ts")
