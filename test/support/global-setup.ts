/**
 * Once per test run: names the template databases the indexed fixture and a migrated database
 * are built into (by the first test file that needs each, see template-db.ts) and drops them when
 * the last project's teardown runs. Each run builds them afresh with the code under test; nothing is kept between runs. Also compiles the
 * service (`bin/build.mjs`) that the tests' child processes run, and chooses the run's Postgres
 * server (test-database.ts: TEST_DATABASE_URL, else the machine's on 127.0.0.1:5432, else an
 * embedded cluster started here and stopped when the run ends), whose URL every file injects.
 */
import { execFileSync } from "node:child_process"
import type { TestProject } from "vitest/node"
import { ROOT } from "./process.js"
import { dropTemplates } from "./template-db.js"
import { acquireTestDatabase, releaseTestDatabase } from "./test-database.js"

declare module "vitest" {
  export interface ProvidedContext {
    fixtureTemplate: string
    /** The run's template of a database with every migration applied (support/postgres.ts). */
    migratedTemplate: string
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
  const migrated = `${template}_migrated`
  project.provide("migratedTemplate", migrated)
  // Shared by every project's setup: the first chooses (and starts a cluster if it must), the last teardown stops it.
  const databaseUrl = await acquireTestDatabase((line) => console.log(line))
  project.provide("databaseUrl", databaseUrl)
  // The templates are the run's, not the project's: every project copies them, so only the last
  // project's teardown drops them (a project's teardown that dropped them `with (force)` could
  // cut a copy another project's file was still taking).
  return () => releaseTestDatabase((url) => dropTemplates(url, [template, migrated]))
}
