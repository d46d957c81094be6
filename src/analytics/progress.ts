/**
 * Per-table progress of an export on a terminal. Tables are copied two at a time, so the bottom
 * line shows every table in flight (rows so far, rows/s), rewritten in place at most ten times
 * a second; a table that finishes gets a line of its own above it (rows, rows/s, seconds).
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

export const noProgress = silent

const grouped = (n: number) => n.toLocaleString("en")

interface Active {
  readonly name: string
  readonly started: number
  count: number
}

const rate = (t: Active, now: number) => {
  const seconds = (now - t.started) / 1000
  return seconds > 0 ? Math.round(t.count / seconds) : 0
}

export const progressOn = (stream: NodeJS.WriteStream = process.stderr): Progress => {
  if (!stream.isTTY) return silent
  const active = new Set<Active>()
  let shown = 0
  const CLEAR = "\r\x1b[2K"
  const render = () => {
    const now = performance.now()
    shown = now
    stream.write(`${CLEAR}${[...active].map((t) => `  ${t.name} ${grouped(t.count)} rows ${grouped(rate(t, now))} rows/s`).join("  |")}`)
  }
  return {
    table: (name, note) => {
      const entry: Active = { name, started: performance.now(), count: 0 }
      active.add(entry)
      render()
      return {
        rows: (count) => {
          entry.count = count
          if (performance.now() - shown >= 100) render()
        },
        done: (count) => {
          entry.count = count
          active.delete(entry)
          const now = performance.now()
          stream.write(
            `${CLEAR}  ${name.padEnd(24)} ${grouped(count).padStart(13)} rows  ${grouped(rate(entry, now)).padStart(11)} rows/s  ${((now - entry.started) / 1000).toFixed(1).padStart(6)} s  ${note}\n`
          )
          if (active.size > 0) render()
        }
      }
    }
  }
}
