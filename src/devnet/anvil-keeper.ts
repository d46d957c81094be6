/**
 * Runs anvil as a child and lives exactly as long as the process that started it: started with
 * an IPC channel (`live.ts`), it stops anvil with SIGTERM (anvil then dumps its state) when
 * told to (SIGTERM, SIGINT) and when the channel closes because its parent died without
 * stopping it (SIGKILL). anvil itself is a native binary that cannot watch its parent.
 *
 * Arguments: the anvil binary, then anvil's arguments. Messages to the parent: `{ port }` once
 * anvil listens. anvil's request log (stdout) is drained and dropped; its stderr is passed on.
 */
import { spawn } from "node:child_process"

const [binary, ...args] = process.argv.slice(2)
if (binary === undefined) {
  process.stderr.write("anvil-keeper: no anvil binary given\n")
  process.exit(2)
}
const anvil = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] })
let banner = ""
let told = false
anvil.stdout.on("data", (chunk: Buffer) => {
  if (told) return
  banner += chunk.toString()
  const listening = /Listening on [^\s:]+:(\d+)/.exec(banner)
  if (listening !== null) {
    told = true
    banner = ""
    process.send?.({ port: Number(listening[1]) })
  }
})
// A parent that is gone has closed our stderr too; a failed write must not kill us before anvil.
process.stderr.on("error", () => {})
anvil.stderr.on("data", (chunk: Buffer) => process.stderr.write(chunk))

const stop = () => {
  if (anvil.exitCode === null && anvil.signalCode === null) anvil.kill("SIGTERM")
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
process.once("disconnect", stop)
process.channel?.unref()
anvil.once("exit", (code, signal) => process.exit(code ?? (signal === "SIGTERM" ? 0 : 1)))
