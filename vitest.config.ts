import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Names the run's template database of the indexed fixture (test/support/fixture-db.ts).
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // One file at a time (vitest's default on two cores), each in its own process. Two forks
    // sharing processes (isolate: false) ran the suite in about 300 s instead of about 450 s, but
    // the devnet scenario then lost a transaction in two CI runs out of three (never seen with
    // one file at a time); until that is understood, the suite stays sequential.
    poolOptions: { forks: { minForks: 1, maxForks: 1 } }
  }
})
