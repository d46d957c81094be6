/**
 * `npm run bench -- <logs> --start`: the whole service as `npm start` runs it (the compiled
 * `.build/main.mjs start`: API process with its notification consumer, indexer child) against the
 * replayed chain, timed from its start until the index holds the finalized block; then stopped
 * with SIGINT, and each process's Postgres work (its `postgres work` line, counted at the wire)
 * printed per 10k events beside the time and the Postgres backends' CPU.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs/promises"
import pg from "pg"
import { API_V8_FLAGS } from "../src/api-heap.js"
import { postgresWorkLine } from "../src/db/database.js"
import { freePort } from "../test/support/process.js"

/** CPU seconds (user + system) of a local process, from /proc; 0 where unreadable (or gone). */
const processCpu = async (pid: number) => {
  const stat = await fs.readFile(`/proc/${pid}/stat`, "utf8").catch(() => "")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / 100
}

/** The pids of `pid`'s children (every thread's), from /proc; none where unreadable. */
const childrenOf = async (pid: number): Promise<Array<number>> => {
  const tasks = await fs.readdir(`/proc/${pid}/task`).catch(() => [] as Array<string>)
  const lists = await Promise.all(tasks.map((t) => fs.readFile(`/proc/${pid}/task/${t}/children`, "utf8").catch(() => "")))
  return lists.flatMap((l) =>
    l
      .split(" ")
      .filter((x) => x !== "")
      .map(Number)
  )
}

/** The command line of a process (its arguments joined by spaces), or "" when gone. */
const commandOf = async (pid: number) => (await fs.readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "")).split("\0").join(" ").trim()

export const benchStart = async (options: {
  readonly databaseUrl: string
  readonly rpcUrl: string
  readonly deploymentFile: string
  readonly finalized: number
}) => {
  const build = spawn(process.execPath, ["bin/build.mjs"], { stdio: ["ignore", "ignore", "inherit"] })
  await new Promise<void>((resolve, reject) =>
    build.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`build exited ${code}`))))
  )
  const db = new pg.Client({ connectionString: options.databaseUrl })
  await db.connect()
  // Postgres backend CPU is sampled per backend pid while the run lasts (backends come and go).
  const backendCpu = new Map<number, number>()
  const sampleBackends = async () => {
    const { rows } = await db.query<{ pid: number }>(
      `select pid from pg_stat_activity where datname = current_database() and backend_type = 'client backend' and pid <> pg_backend_pid()`
    )
    for (const { pid } of rows) {
      const cpu = await processCpu(pid)
      if (cpu > 0) backendCpu.set(pid, Math.max(backendCpu.get(pid) ?? 0, cpu))
    }
  }
  // The service's own processes (the API process, the indexer child): CPU sampled per pid too.
  const serviceCpu = new Map<number, { readonly name: string; cpu: number }>()
  const sampleService = async (root: number) => {
    const pids = [root]
    for (let i = 0; i < pids.length; i++) pids.push(...(await childrenOf(pids[i]!)))
    for (const pid of pids) {
      const cpu = await processCpu(pid)
      const known = serviceCpu.get(pid)
      if (known !== undefined) known.cpu = Math.max(known.cpu, cpu)
      else if (cpu > 0) serviceCpu.set(pid, { name: /--only indexer/.test(await commandOf(pid)) ? "indexer" : "api", cpu })
    }
  }
  const began = performance.now()
  const child = spawn(process.execPath, [...API_V8_FLAGS, ".build/main.mjs", "start"], {
    env: {
      ...process.env,
      DATABASE_URL: options.databaseUrl,
      RPC_URL: options.rpcUrl,
      DEPLOYMENT: options.deploymentFile,
      INDEXER_PORT: String(await freePort()),
      BACKEND_PORT: String(await freePort()),
      LOG_LEVEL: "info"
    },
    stdio: ["ignore", "pipe", "inherit"]
  })
  let output = ""
  child.stdout!.setEncoding("utf8")
  child.stdout!.on("data", (chunk: string) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve))
  let done = false
  void exited.then(() => {
    if (!done) console.error(`the service exited early:\n${output.slice(-3000)}`)
  })
  for (;;) {
    const { rows } = await db
      .query<{ block_number: string }>(`select block_number from indexer_checkpoint`)
      .catch(() => ({ rows: [] as Array<{ block_number: string }> }))
    if (rows.length > 0 && Number(rows[0]!.block_number) >= options.finalized) break
    if (child.exitCode !== null) throw new Error("the service exited before the finalized block")
    await sampleBackends().catch(() => undefined)
    await sampleService(child.pid!).catch(() => undefined)
    await new Promise((r) => setTimeout(r, 200))
  }
  const seconds = (performance.now() - began) / 1000
  await sampleBackends().catch(() => undefined)
  await sampleService(child.pid!).catch(() => undefined)
  done = true
  child.kill("SIGINT")
  await exited
  await db.end()
  const postgresCpu = [...backendCpu.values()].reduce((a, b) => a + b, 0)
  console.log(`npm start: the finalized block indexed in ${seconds.toFixed(1)} s (from the process's start, migrations included)`)
  console.log(`Postgres backends' CPU meanwhile: ${postgresCpu.toFixed(1)} s (sampled per backend every 200 ms)`)
  const cpuOf = (name: string) => [...serviceCpu.values()].filter((p) => p.name === name).reduce((a, p) => a + p.cpu, 0)
  console.log(
    `CPU of the service's processes meanwhile: API process ${cpuOf("api").toFixed(1)} s, indexer process ${cpuOf("indexer").toFixed(1)} s (both threads; sampled every 200 ms)`
  )
  const work = output
    .split("\n")
    .map(postgresWorkLine)
    .filter((line) => line !== undefined)
  // Events backfilled: the sum of the indexer's progress lines (one per committed batch).
  const n = output
    .split("\n")
    .filter((line) => line.includes("message=indexed "))
    .reduce((sum, line) => sum + Number(/\bevents=(\d+)/.exec(line)?.[1] ?? 0), 0)
  console.log(`events backfilled (the indexer's progress lines): ${n.toLocaleString("en")}`)
  for (const { role, work: w } of work) {
    const per10k = (x: number) => (n > 0 ? Math.round((x * 10_000) / n).toLocaleString("en") : "?")
    console.log(
      `Postgres work of the ${role} process (to its stop): ${w.statements.toLocaleString("en")} statements, ` +
        `${w.rowsWritten.toLocaleString("en")} rows written (${w.rowsInserted} inserted, ${w.rowsUpdated} updated, ${w.rowsDeleted} deleted, ${w.rowsCopied} copied), ` +
        `${(w.bytesSent / 2 ** 20).toFixed(1)} MiB sent; per 10k events: ${per10k(w.statements)} statements, ${per10k(w.rowsWritten)} rows, ${per10k(w.bytesSent)} bytes`
    )
  }
}
