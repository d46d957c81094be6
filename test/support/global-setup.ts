/**
 * Once per test run: names the template database the indexed fixture is built into (by the first
 * test file that needs it, see fixture-db.ts) and drops it when the run ends. Each run indexes
 * the fixture afresh with the code under test; nothing is kept between runs. Also compiles the
 * service (`bin/build.mjs`) that the tests' child processes run, and chooses the run's Postgres
 * server (test-database.ts: TEST_DATABASE_URL, else the machine's on 127.0.0.1:5432, else an
 * embedded cluster started here and stopped when the run ends), whose URL every file injects.
 */
import { execFileSync } from "node:child_process"
import type { TestProject } from "vitest/node"
import pg from "pg"
import { ROOT } from "./process.js"
import { acquireTestDatabase, releaseTestDatabase } from "./test-database.js"

declare module "vitest" {
  export interface ProvidedContext {
    fixtureTemplate: string
    /** The run's Postgres server (its `postgres` database); tests create scratch databases on it. */
    databaseUrl: string
  }
}

export default async function setup(project: TestProject) {
  // Each project of vitest.config.ts runs this setup; they share one template (and one build).
  const first = process.env["PREDIX_FIXTURE_TEMPLATE"] === undefined
  const template = (process.env["PREDIX_FIXTURE_TEMPLATE"] ??= `predix_fixture_${process.pid}_${Date.now().toString(36)}`)
  // The processes the tests start run the compiled service, as `npm start` does (support/process.ts).
  if (first) execFileSync(process.execPath, ["bin/build.mjs"], { cwd: ROOT, stdio: "inherit" })
  project.provide("fixtureTemplate", template)
  // Shared by every project's setup: the first chooses (and starts a cluster if it must), the last teardown stops it.
  const databaseUrl = await acquireTestDatabase((line) => console.log(line))
  project.provide("databaseUrl", databaseUrl)
  return async () => {
    await dropTemplates(databaseUrl, template)
    await releaseTestDatabase()
  }
}

/** Drops the run's fixture template (and a half-built one) from the server at `url`, if it still answers. */
const dropTemplates = async (url: string, template: string) => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 })
  try {
    await client.connect()
    for (const name of [template, `${template}_build`]) await client.query(`drop database if exists ${name} with (force)`)
  } catch {
    // The server is gone (an embedded cluster another project's teardown stopped): nothing to drop.
  } finally {
    await client.end().catch(() => {})
  }
}
