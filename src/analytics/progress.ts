/**
 * Per-table progress of an export on a terminal: one line per table, rewritten in place at most
 * ten times a second while it is copied (rows so far, rows/s), then left with its final count.
 * Silent when the stream is not a terminal (logs, pipes, CI): the final log line says it all.
 */

export interface Progress {
  readonly table: (name: string, note: string) => TableProgress
}

export interface TableProgress {
  readonly rows: (count: number) => void
  readonly done: (count: number) => void
}

const silent: Progress = { table: () => ({ rows: () => undefined, done: () => undefined }) }

const grouped = (n: number) => n.toLocaleString("en")

export const progressOn = (stream: NodeJS.WriteStream = process.stderr): Progress => {
  if (!stream.isTTY) return silent
  return {
    table: (name, note) => {
      const started = performance.now()
      let shown = 0
      const line = (count: number, final: boolean) => {
        const seconds = (performance.now() - started) / 1000
        const rate = seconds > 0 ? Math.round(count / seconds) : 0
        stream.write(
          `\r\x1b[2K  ${name.padEnd(24)} ${grouped(count).padStart(13)} rows  ${grouped(rate).padStart(11)} rows/s  ${seconds.toFixed(1).padStart(6)} s  ${note}${final ? "\n" : ""}`
        )
      }
      line(0, false)
      return {
        rows: (count) => {
          const now = performance.now()
          if (now - shown < 100) return
          shown = now
          line(count, false)
        },
        done: (count) => line(count, true)
      }
    }
  }
}

export const noProgress = silent
