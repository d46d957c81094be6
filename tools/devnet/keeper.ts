/**
 * Runs a devnet server (anvil, or the alto bundler) as a child and lives exactly as long as the
 * process that started it: started with an IPC channel (`live.ts`, `bundler.ts`), it stops the
 * child with SIGTERM (anvil then dumps its state) when told to (SIGTERM, SIGINT) and when the
 * channel closes because its parent died without stopping it (SIGKILL). Neither child can watch
 * its parent itself (anvil is a native binary, alto a third-party CLI).
 *
 * Arguments: the executable, then its arguments. Messages to the parent: `{ port }` once the
 * child logs where it listens (anvil: "Listening on host:port", alto: "Server listening at
 * http://host:port"). The child's stdout (request logs) is drained and dropped after that; its
 * stderr is passed on.
 */
import { spawn } from "node:child_process"

const [binary, ...args] = process.argv.slice(2)
if (binary === undefined) {
  process.stderr.write("keeper: no executable given\n")
  process.exit(2)
}
const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] })
let banner = ""
let told = false
child.stdout.on("data", (chunk: Buffer) => {
  if (told) return
  banner += chunk.toString()
  const listening = /(?:Listening on |[Ll]istening at https?:\/\/)[^\s:]+:(\d+)/.exec(banner)
  if (listening !== null) {
    told = true
    banner = ""
    process.send?.({ port: Number(listening[1]) })
  }
})
// A parent that is gone has closed our stderr too; a failed write must not kill us before the child.
process.stderr.on("error", () => {})
child.stderr.on("data", (chunk: Buffer) => process.stderr.write(chunk))

const stop = () => {
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
process.once("disconnect", stop)
process.channel?.unref()
child.once("exit", (code, signal) => process.exit(code ?? (signal === "SIGTERM" ? 0 : 1)))
