// Compiles the service into `.build/` (one ES module per entry, our code bundled, packages left
// to node_modules) so that `npm start` and the processes it spawns load plain JavaScript instead
// of transpiling the tree through tsx at every start. Takes well under a second; run by `npm start`
// and by the test suite's global setup. Usage: node bin/build.mjs
import { build } from "esbuild"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")

await build({
  absWorkingDir: root,
  // Entry names are the file names the code asks for when it runs compiled (src/project-root.ts).
  entryPoints: {
    main: "src/main.ts",
    login: "src/login.ts",
    keeper: "tools/devnet/keeper.ts",
    "backfill-thread-worker": "pipeline/source/backfill-thread-worker.ts"
  },
  outdir: ".build",
  outExtension: { ".js": ".mjs" },
  bundle: true,
  packages: "external",
  platform: "node",
  format: "esm",
  target: "node20",
  logLevel: "warning"
})
