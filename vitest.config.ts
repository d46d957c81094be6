import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Names the run's template database of the indexed fixture (test/support/fixture-db.ts).
    globalSetup: ["test/support/global-setup.ts"],
    // Suites that start Postgres share two cores; keep files sequential-friendly.
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: "forks"
  }
})
