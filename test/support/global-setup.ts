/**
 * Once per test run: names the template database the indexed fixture is built into (by the first
 * test file that needs it, see fixture-db.ts) and drops it when the run ends. Each run indexes
 * the fixture afresh with the code under test; nothing is kept between runs. Also compiles the
 * service (`bin/build.mjs`) that the tests' child processes run.
 */
import { execFileSync } from "node:child_process"
import type { TestProject } from "vitest/node"
import pg from "pg"
import { ROOT } from "./process.js"

declare module "vitest" {
  export interface ProvidedContext {
    fixtureTemplate: string
  }
}

const EXTERNAL_URL = process.env["TEST_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"

export default function setup(project: TestProject) {
  // Each project of vitest.config.ts runs this setup; they share one template (and one build).
  const first = process.env["PREDIX_FIXTURE_TEMPLATE"] === undefined
  const template = (process.env["PREDIX_FIXTURE_TEMPLATE"] ??= `predix_fixture_${process.pid}_${Date.now().toString(36)}`)
  // The processes the tests start run the compiled service, as `npm start` does (support/process.ts).
  if (first) execFileSync(process.execPath, ["bin/build.mjs"], { cwd: ROOT, stdio: "inherit" })
  project.provide("fixtureTemplate", template)
  return async () => {
    const client = new pg.Client({ connectionString: EXTERNAL_URL, connectionTimeoutMillis: 5_000 })
    try {
      await client.connect()
      for (const name of [template, `${template}_build`]) await client.query(`drop database if exists ${name} with (force)`)
    } catch {
      // No Postgres in this run (or it is gone): nothing was built.
    } finally {
      await client.end().catch(() => {})
    }
  }
}
