/**
 * Runs this project's command line on a pseudo-terminal, as a person at a terminal does: under
 * util-linux `script`, whose pty makes the program's stdout a TTY. Ctrl+C is typed into the
 * terminal (the pty turns it into SIGINT for the foreground process group), not sent by pid.
 */
import { spawn } from "node:child_process"
import { MAIN, ROOT, type Running, watchOutput } from "./process.js"

/** The screen's text with ANSI escapes and carriage returns removed (what a pattern is matched against). */
export const screenText = (raw: string): string =>
  raw
    .replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "")
    .replace(/\r\n/g, "\n")
    .replace(/\r/g, "\n")

export interface OnTerminal extends Running {
  /** Everything the program wrote, escapes included. */
  readonly raw: () => string
  /** Types Ctrl+C. */
  readonly interrupt: () => void
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

export const runCliOnTerminal = (args: ReadonlyArray<string>, env: Record<string, string>, columns = 160): OnTerminal => {
  const command = `stty cols ${columns} rows 50; exec ${[process.execPath, MAIN, ...args].map(shellQuote).join(" ")}`
  const child = spawn("script", ["-qfec", command, "/dev/null"], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"]
  })
  let raw = ""
  child.stdout.on("data", (chunk: Buffer) => void (raw += chunk.toString("utf8")))
  const running = watchOutput(child, screenText)
  return { ...running, raw: () => raw, interrupt: () => void child.stdin.write("\x03") }
}
