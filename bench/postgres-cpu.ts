/**
 * CPU time of the Postgres backends that serve one application's connections to one database:
 * what a request costs the database server, beside what it costs the service's own process.
 *
 * Read from `/proc/<pid>/stat` (user + system time of each backend process; the server must run
 * on this machine, as the machine Postgres and the embedded one do) for the backends
 * `pg_stat_activity` lists for the database under `applicationName`. A sample is a map pid ->
 * ticks; the CPU between two samples is the sum over the backends of both of their differences,
 * plus the whole time of a backend that started in between. A backend that ended in between has
 * its time lost: `lost` counts them, so a figure that undercounts says so.
 */
import { readFileSync } from "node:fs"
import pg from "pg"

/** Linux reports process times in USER_HZ ticks, 100 per second on every architecture the kernel exports. */
const TICK_MICROS = 10_000

export type PostgresCpuSample = ReadonlyMap<number, number>

/** User + system ticks of process `pid`, undefined when it has gone. */
const processTicks = (pid: number): number | undefined => {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  } catch {
    return undefined
  }
  // The command name (field 2) is in parentheses and may hold spaces: fields are counted after its ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  // Fields 14 and 15 of the line (utime, stime) are the 12th and 13th after the name.
  return Number(fields[11]) + Number(fields[12])
}

export async function samplePostgresCpu(dbUrl: string, applicationName: string): Promise<PostgresCpuSample> {
  const client = new pg.Client({ connectionString: dbUrl, application_name: "predix-bench-probe" })
  await client.connect()
  try {
    const { rows } = await client.query<{ pid: number }>(
      "select pid from pg_stat_activity where datname = current_database() and application_name = $1",
      [applicationName]
    )
    const sample = new Map<number, number>()
    for (const { pid } of rows) {
      const ticks = processTicks(pid)
      if (ticks !== undefined) sample.set(pid, ticks)
    }
    return sample
  } finally {
    await client.end()
  }
}

/** Microseconds of backend CPU between two samples, and how many backends of the first are gone from the second. */
export const postgresCpuBetween = (before: PostgresCpuSample, after: PostgresCpuSample): { micros: number; lost: number } => {
  let ticks = 0
  let lost = 0
  for (const [pid, end] of after) ticks += end - (before.get(pid) ?? 0)
  for (const pid of before.keys()) if (!after.has(pid)) lost++
  return { micros: ticks * TICK_MICROS, lost }
}
