import { defineConfig } from "vitest/config"

/**
 * Files that drive a live anvil chain (the devnet, its bundler, the router): they run one at a
 * time. The devnet scenario lost a transaction in two CI runs out of three when two such files
 * shared processes (isolate: false); kept apart from each other they only share the machine.
 */
const CHAIN = [
  "test/devnet/**/*.test.ts",
  "test/http/backend/aa-*.test.ts",
  "test/http/backend/notifications-chain.test.ts",
  "test/http/backend/sessions-smart-account.test.ts"
]

/**
 * Files that need a module graph of their own: the rest share one per worker process (isolate:
 * false, below), and these read process-wide state another file leaves behind (Effect's global
 * metric registry). They run with the chain files, each in a fresh worker.
 */
const OWN_MODULES = ["test/http/indexer/metrics.test.ts"]

/**
 * Slow files that need neither: they run in the chain lane too, only to even out the two lanes
 * (the chain lane is one file at a time, the rest two; in CI on 2026-11-28 the rest took 1,643 s
 * of file time, about 820 s of wall, and the chain lane 579 s).
 */
const BALANCE = ["test/pipeline/db-outage.test.ts", "test/pipeline/blue-green.test.ts"]

export default defineConfig({
  test: {
    // Names the run's template database of the indexed fixture (test/support/fixture-db.ts).
    globalSetup: ["test/support/global-setup.ts"],
    // The default output, then each file's time by project (the end of a CI log says where the
    // minutes went).
    reporters: ["default", "./test/support/file-times.ts"],
    // Hang guards, not measurements: generous, because CI shares two cores between three files
    // (and a session's machine between several engineers); a 60 s limit failed a healthy
    // test/pipeline/run.test.ts at a load average of 12.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // Two pools side by side, each file on its own (its own process, or its own worker thread):
    // the chain files one at a time in a worker thread, the rest two at a time in child
    // processes. (Vitest runs different pools at once, and the size of a pool is set for the run,
    // not per project.) Most files wait on child processes, Postgres or a chain's blocks more than
    // they compute, so three at once on two cores is faster than one at a time without starving
    // any of them.
    pool: "forks",
    poolOptions: { forks: { minForks: 1, maxForks: 2 }, threads: { minThreads: 1, maxThreads: 1 } },
    projects: [
      { extends: true, test: { name: "chain", include: [...CHAIN, ...OWN_MODULES, ...BALANCE], pool: "threads" } },
      // The rest reuse their worker's loaded modules from file to file (isolate: false): loading
      // Effect, viem and the app again for each of ~150 files cost about 2 s of CPU per file. Each
      // file still gets its own databases, servers and layers; none keeps module-level state that
      // another reads, but for OWN_MODULES.
      {
        extends: true,
        test: { name: "rest", include: ["test/**/*.test.ts"], exclude: [...CHAIN, ...OWN_MODULES, ...BALANCE], isolate: false }
      }
    ]
  }
})
