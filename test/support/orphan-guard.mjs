/**
 * Watches over the embedded Postgres a test run started (test-database.ts): when the run's
 * process is gone without stopping it (Ctrl+C: Vitest exits without running teardowns; SIGKILL),
 * kills the server's process group and removes its temporary directory. Runs detached, so a
 * terminal's Ctrl+C does not reach it; the run kills it once it has stopped the server itself.
 *
 * Usage: node orphan-guard.mjs <pid of the run> <temporary directory>
 * The server's pid is read from <dir>/postgres/cluster/postmaster.pid (absent while it starts).
 */
import * as fs from "node:fs"
import * as Path from "node:path"

const [runPid, dir] = [Number(process.argv[2]), process.argv[3]]
if (!Number.isSafeInteger(runPid) || runPid <= 0 || dir === undefined) process.exit(2)

/** Whether `pid` runs; a zombie (dead, not reaped yet) does not. */
const running = (pid) => {
  if (fs.existsSync("/proc/self")) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
      return stat[stat.lastIndexOf(")") + 2] !== "Z"
    } catch {
      return false
    }
  }
  try {
    process.kill(pid, 0) // no /proc: a signal 0 tells a live process
    return true
  } catch (error) {
    return error.code === "EPERM"
  }
}

const serverPid = () => {
  try {
    const pid = Number(fs.readFileSync(Path.join(dir, "postgres", "cluster", "postmaster.pid"), "utf8").split("\n")[0])
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

while (running(runPid)) await sleep(500)
const pid = serverPid()
if (pid !== undefined) {
  try {
    process.kill(-pid, "SIGKILL") // the server runs in its own process group: postmaster and backends
  } catch {
    // already gone
  }
  for (let i = 0; i < 100 && running(pid); i++) await sleep(50)
}
fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10 })
