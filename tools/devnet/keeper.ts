/**
 * Runs a devnet server (anvil, or the alto bundler) as a child and lives exactly as long as the
 * process that started it: started with an IPC channel (`kept.ts`), it stops the child with
 * SIGTERM (anvil then dumps its state) when told to (SIGTERM, SIGINT) and when the channel closes
 * because its parent died without stopping it (SIGKILL). Neither child can watch its parent
 * itself (anvil is a native binary, alto a third-party CLI).
 *
 * Arguments: `[--restart]`, the executable, then its arguments. Messages to the parent: `{ port }`
 * once the child logs where it listens (anvil: "Listening on host:port", alto: "Server listening
 * at http://host:port"). The child's stdout (request logs) is drained and dropped after that; its
 * stderr is passed on.
 *
 * With `--restart` (anvil), a child that dies while it is not being stopped (killed, crashed) is
 * started again with the same arguments, on the port it listened on before (`--port` replaced:
 * clients keep their URL), continuing from the state it saved last (`--state`: anvil loads the
 * file it dumps to). Invariants:
 * - the parent hears of it: `{ event: "died", code, signal }`, then `{ event: "restarted", port,
 *   state }` once the new child listens, or `{ event: "retrying", message }` per failed attempt;
 *   attempts go on (backing off up to 10 s) until the parent stops us;
 * - a state file that cannot be loaded (the child was killed while dumping it: anvil writes it in
 *   place) is set aside and the copy taken at the last successful start is loaded instead: the
 *   state file is copied to `<state>.loaded` as soon as a child listens (it has read the file; its
 *   first dump is an interval away), so that copy is always one anvil could read.
 */
import { spawn, type ChildProcess } from "node:child_process"
import { copyFileSync, existsSync, renameSync } from "node:fs"

const argv = process.argv.slice(2)
const restart = argv[0] === "--restart"
const [binary, ...initialArgs] = restart ? argv.slice(1) : argv
if (binary === undefined) {
  process.stderr.write("keeper: no executable given\n")
  process.exit(2)
}
// A parent that is gone has closed our stderr too; a failed write must not kill us before the child.
process.stderr.on("error", () => {})

/** The value after `flag` in `args`, if any. */
const valueOf = (args: ReadonlyArray<string>, flag: string) => {
  const at = args.indexOf(flag)
  return at === -1 ? undefined : args[at + 1]
}
const statePath = valueOf(initialArgs, "--state")
const backupPath = statePath === undefined ? undefined : `${statePath}.loaded`
const send = (message: Record<string, unknown>) => {
  if (process.connected) process.send?.(message)
}

let child: ChildProcess | undefined
let stopping = false
/** The port the first child listened on; restarts bind it again. */
let port: number | undefined
let attempts = 0

const argsFor = (): Array<string> => {
  if (port === undefined) return initialArgs
  const args = [...initialArgs]
  const at = args.indexOf("--port")
  if (at !== -1) args[at + 1] = String(port)
  return args
}

const start = (state: "saved" | "backup") => {
  const current = spawn(binary, argsFor(), { stdio: ["ignore", "pipe", "pipe"] })
  child = current
  let banner = ""
  let listening = false
  current.stdout!.on("data", (chunk: Buffer) => {
    if (listening) return
    banner += chunk.toString()
    const found = /(?:Listening on |[Ll]istening at https?:\/\/)[^\s:]+:(\d+)/.exec(banner)
    if (found === null) return
    listening = true
    banner = ""
    attempts = 0
    // The file anvil has just read (its first dump is seconds away): a readable state to fall back on if a later dump is cut short.
    if (restart && statePath !== undefined && backupPath !== undefined && existsSync(statePath)) copyFileSync(statePath, backupPath)
    if (port === undefined) {
      port = Number(found[1])
      send({ port })
    } else send({ event: "restarted", port: Number(found[1]), state })
  })
  let stderr = ""
  current.stderr!.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2000)
    process.stderr.write(chunk)
  })
  current.once("exit", (code, signal) => {
    child = undefined
    // Stopped by us, or never up at all on the first start (the parent reports that): we end with it.
    if (stopping || !restart || port === undefined) return process.exit(code ?? (signal === "SIGTERM" || stopping ? 0 : 1))
    if (listening) send({ event: "died", code, signal })
    else {
      const reason = stderr.trim().split("\n").slice(-1)[0] ?? `exit code ${code}`
      send({ event: "retrying", message: `${binary.split("/").pop()} did not start again: ${reason}` })
    }
    attempts++
    // Up but unreadable state (anvil refuses it before listening): set it aside, load the last readable copy.
    const useBackup =
      !listening && statePath !== undefined && backupPath !== undefined && existsSync(backupPath) && /state|json|parse/i.test(stderr)
    if (useBackup) {
      renameSync(statePath!, `${statePath}.${Date.now()}.unreadable`)
      renameSync(backupPath!, statePath!)
    }
    const delay = Math.min(10_000, 250 * 2 ** Math.min(attempts, 6))
    setTimeout(() => {
      if (!stopping) start(useBackup ? "backup" : "saved")
    }, delay)
  })
}

const stop = () => {
  stopping = true
  if (child === undefined) return process.exit(0)
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
process.once("disconnect", stop)
process.channel?.unref()
start("saved")
