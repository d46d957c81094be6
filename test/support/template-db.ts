/**
 * Copies of a template database that the first file to ask builds, once per test run: creating a
 * database from a template copies its files, which is much cheaper than building its content
 * again (every migration, or the index of the fixture) in each file that wants one.
 *
 * Invariants: a copy is never taken of a half-built template (it is built under another name and
 * renamed when complete, all under an advisory lock the other files wait on), and every copy is
 * a database of its own, so a test that changes its database sees nobody else's changes. The
 * templates are dropped by global-setup.ts in the last project's teardown (never while another project may copy them).
 */
import { Effect } from "effect"
import pg from "pg"

/** The URL of database `name` on the server of `serverUrl`. */
export const databaseUrlOn = (serverUrl: string, name: string) => {
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return url.toString()
}

/** Runs `f` on a fresh connection to `url`, closed afterwards. */
export const withClient = <A>(url: string, f: (client: pg.Client) => Promise<A>) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      return await f(client)
    } finally {
      await client.end()
    }
  })

/** A name for a scratch database no other file or test of any run uses. */
export const scratchName = () => `predix_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`

/**
 * The name of a new database on the server of `serverUrl`, copied from `template`, which `build`
 * fills first (given the URL of an empty database; it must close its connections) if no file of
 * this run has built it yet. Dropped with the scope.
 */
export const copyOfTemplate = <E, R>(serverUrl: string, template: string, build: (url: string) => Effect.Effect<unknown, E, R>) =>
  Effect.acquireRelease(
    Effect.gen(function* () {
      const lock = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const client = new pg.Client({ connectionString: serverUrl })
          await client.connect()
          await client.query(`select pg_advisory_lock(hashtext($1))`, [template])
          return client
        }),
        (client) => Effect.promise(() => client.end())
      )
      const built = (yield* Effect.promise(() => lock.query(`select 1 from pg_database where datname = $1`, [template]))).rowCount === 1
      if (!built) {
        const building = `${template}_build`
        yield* Effect.promise(() => lock.query(`drop database if exists ${building} with (force)`))
        yield* Effect.promise(() => lock.query(`create database ${building}`))
        yield* build(databaseUrlOn(serverUrl, building))
        // A template must have no connections: `build` closed its own.
        yield* Effect.promise(() => lock.query(`alter database ${building} rename to ${template}`))
      }
      const name = scratchName()
      yield* Effect.promise(() => lock.query(`create database ${name} template ${template}`))
      return name
    }).pipe(Effect.scoped),
    (name) => withClient(serverUrl, (client) => client.query(`drop database if exists ${name} with (force)`))
  )

/** Drops the templates `names` (and half-built ones) from the server at `url`, if it still answers. */
export const dropTemplates = async (url: string, names: ReadonlyArray<string>) => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 })
  try {
    await client.connect()
    for (const name of names) for (const each of [name, `${name}_build`]) await client.query(`drop database if exists ${each} with (force)`)
  } catch {
    // The server is gone (an embedded cluster another project's teardown stopped): nothing to drop.
  } finally {
    await client.end().catch(() => {})
  }
}
