import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Names the run's template database of the indexed fixture (test/support/fixture-db.ts).
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Two files at a time even on two cores: most files wait on Postgres, child processes
    // (the CLI, anvil, embedded Postgres) or RPC retries for much of their time, so one file at a
    // time leaves a core idle. (vitest's default would be one fork: cores - 1.)
    poolOptions: { forks: { minForks: 1, maxForks: Math.max(2, Math.min(availableParallelism() - 1, 4)) } },
    // One process per fork for all its files: no test file changes process-wide state (no mocks,
    // globals, environment or fake timers), and loading Effect, viem and pg once per fork rather
    // than once per file saves about a second of CPU per file.
    isolate: false
  }
})
