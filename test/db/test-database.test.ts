/**
 * The test run's choice of Postgres server (test/support/test-database.ts): a given
 * TEST_DATABASE_URL as is, TEST_EMBEDDED_POSTGRES=1 an embedded cluster, else the machine's server
 * when it answers and an embedded cluster when nothing does (a fresh machine). And every file
 * gets the server the global setup chose.
 */
import * as net from "node:net"
import { Effect } from "effect"
import { describe, expect, inject, it } from "vitest"
import type { TestProject } from "vitest/node"
import setup from "../support/global-setup.js"
import { EXTERNAL_URL, query } from "../support/postgres.js"
import { scratchName } from "../support/template-db.js"
import { chooseServer, MACHINE_URL, postgresAnswers } from "../support/test-database.js"

/** A probe that records being asked. */
const probe = (answer: boolean) => {
  const asked: Array<string> = []
  return { asked, answers: async (url: string) => (asked.push(url), answer) }
}

/** A loopback port nothing listens on (bound, then released). */
const closedPort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

describe("the test run's Postgres server", () => {
  it("is the machine's when it answers and an embedded cluster when nothing does; the variables decide without a probe", async () => {
    const up = probe(true)
    expect(await chooseServer({}, up.answers)).toEqual({ kind: "machine", url: MACHINE_URL })
    expect(up.asked).toEqual([MACHINE_URL])

    const down = probe(false)
    expect(await chooseServer({}, down.answers)).toMatchObject({ kind: "embedded" })
    expect(await chooseServer({ TEST_DATABASE_URL: "" }, down.answers)).toMatchObject({ kind: "embedded" })

    const unasked = probe(true)
    const given = "postgres://someone@db.example:6543/postgres"
    expect(await chooseServer({ TEST_DATABASE_URL: given, TEST_EMBEDDED_POSTGRES: "1" }, unasked.answers)).toEqual({
      kind: "given",
      url: given
    })
    expect(await chooseServer({ TEST_EMBEDDED_POSTGRES: "1" }, unasked.answers)).toEqual({
      kind: "embedded",
      reason: "TEST_EMBEDDED_POSTGRES=1"
    })
    expect(unasked.asked).toEqual([])
  })

  it("answers only where a Postgres accepts the connection: not on a closed port, not on a listener that is not Postgres", async () => {
    expect(await postgresAnswers(EXTERNAL_URL)).toBe(true)
    expect(await postgresAnswers(`postgres://postgres@127.0.0.1:${await closedPort()}/postgres`)).toBe(false)
    const mute = net.createServer((socket) => socket.destroy())
    await new Promise<void>((resolve) => mute.listen(0, "127.0.0.1", resolve))
    try {
      const port = (mute.address() as net.AddressInfo).port
      expect(await postgresAnswers(`postgres://postgres@127.0.0.1:${port}/postgres`)).toBe(false)
    } finally {
      await new Promise((resolve) => mute.close(resolve))
    }
  })

  it("is the one the global setup chose, for every file, and it serves queries", async () => {
    // Compared as a boolean: a diff would print the embedded cluster's password.
    expect(EXTERNAL_URL === inject("databaseUrl"), "support/postgres.ts serves the injected server").toBe(true)
    // Forced, the run's server is its own cluster on another port, never the machine's.
    if (process.env["TEST_EMBEDDED_POSTGRES"] === "1" && process.env["TEST_DATABASE_URL"] === undefined) {
      expect(new URL(EXTERNAL_URL).port).not.toBe("5432")
    }
    const rows = await Effect.runPromise(query<{ one: number }>(EXTERNAL_URL, "select 1 as one"))
    expect(rows.rows).toEqual([{ one: 1 }])
  })

  it("keeps the run's templates until the last project's teardown, which drops them", async () => {
    // Two projects' setups, as vitest.config.ts has, on templates of this test's own (the run's
    // are left alone): the name set beforehand also skips the setup's build of the service.
    const saved = { template: process.env["PREDIX_FIXTURE_TEMPLATE"], url: process.env["TEST_DATABASE_URL"] }
    const template = scratchName()
    process.env["PREDIX_FIXTURE_TEMPLATE"] = template
    process.env["TEST_DATABASE_URL"] = EXTERNAL_URL
    const project = { provide: () => undefined } as unknown as TestProject
    const names = [template, `${template}_migrated`]
    const exist = async () =>
      (
        await Effect.runPromise(
          query<{ datname: string }>(EXTERNAL_URL, `select datname from pg_database where datname = any($1)`, [names])
        )
      ).rows
        .map((r) => r.datname)
        .sort()
    try {
      const teardowns = [await setup(project), await setup(project)]
      for (const name of names) await Effect.runPromise(query(EXTERNAL_URL, `create database ${name}`))
      await teardowns[1]!()
      expect(await exist(), "after the first teardown, the other project may still copy them").toEqual(names.sort())
      await teardowns[0]!()
      expect(await exist(), "the last teardown drops them").toEqual([])
    } finally {
      for (const name of names) await Effect.runPromise(query(EXTERNAL_URL, `drop database if exists ${name} with (force)`))
      for (const [key, value] of [
        ["PREDIX_FIXTURE_TEMPLATE", saved.template],
        ["TEST_DATABASE_URL", saved.url]
      ] as const) {
        if (value === undefined) delete process.env[key]
        else process.env[key] = value
      }
    }
  })
})
