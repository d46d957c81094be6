/**
 * The file an export writes: `<out>.tmp-<pid>` next to `<out>`, renamed over it only when
 * complete. A refresh starts from a copy of `<out>` (never `<out>` itself, so whatever happens
 * to the run, `<out>` stays the previous complete snapshot); a full export from a new file.
 */
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import type { TablePlan } from "./catalog.js"
import { closeDuckFile, openDuckFile, type DuckFile } from "./duckdb-writer.js"
import { messageOf } from "./errors.js"
import { readManifest, refreshBlocker, type Manifest } from "./manifest.js"
import type { SnapshotPoint } from "./point.js"

export const tempPathOf = (out: string) => `${out}.tmp-${process.pid}`

/** The CSV file table number `n` passes through on its way into `temp` (`copy-table.ts`). */
export const csvPathOf = (temp: string, n: number) => `${temp}.${n}.csv`

/** Removes a DuckDB file, its WAL and its temporary directory (where DuckDB spills a large sort). */
export const removeDuckFile = (path: string) =>
  Promise.all([fs.rm(path, { force: true }), fs.rm(`${path}.wal`, { force: true }), fs.rm(`${path}.tmp`, { force: true, recursive: true })])

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * Removes temporary files (DuckDB file, its WAL and temporary directory, table CSVs) of earlier
 * exports to `out` whose process is gone (killed midway).
 */
export const removeStaleTemps = async (out: string) => {
  const dir = Path.dirname(out)
  const prefix = `${Path.basename(out)}.tmp-`
  const names = await fs.readdir(dir).catch(() => [] as Array<string>)
  for (const name of names) {
    if (!name.startsWith(prefix)) continue
    const pid = Number(/^(\d+)(\.wal|\.tmp|\.\d+\.csv)?$/.exec(name.slice(prefix.length))?.[1])
    if (Number.isSafeInteger(pid) && pid !== process.pid && !isAlive(pid))
      await fs.rm(Path.join(dir, name), { force: true, recursive: true })
  }
}

const isFile = (path: string) =>
  fs.stat(path).then(
    (s) => s.isFile(),
    () => false
  )

export interface Target {
  readonly file: DuckFile
  /** The manifest of the snapshot being refreshed; undefined for a full export. */
  readonly previous: Manifest | undefined
  /** Why an existing `out` is not refreshed in place. */
  readonly fullBecause: string | undefined
}

/** Opens `temp`: a copy of `out` when its manifest allows a refresh to `point`, else a new file. */
export const prepareTarget = async (
  out: string,
  temp: string,
  point: SnapshotPoint,
  plans: ReadonlyArray<TablePlan>,
  full: boolean
): Promise<Target> => {
  await removeDuckFile(temp)
  let fullBecause: string | undefined
  if (!full && (await isFile(out))) {
    await fs.copyFile(out, temp)
    const file = await openDuckFile(temp).catch((error: unknown) => {
      fullBecause = `${out} is not a readable DuckDB file (${messageOf(error)})`
      return undefined
    })
    if (file !== undefined) {
      const previous = await readManifest(file.connection).catch((error: unknown) => `its manifest is unreadable (${messageOf(error)})`)
      const blocker = typeof previous === "string" ? previous : refreshBlocker(previous, point, plans)
      if (blocker === undefined) return { file, previous: previous as Manifest, fullBecause: undefined }
      fullBecause = `${out} cannot be refreshed in place: ${blocker}`
      await closeDuckFile(file, false)
    }
    await removeDuckFile(temp)
  }
  return { file: await openDuckFile(temp), previous: undefined, fullBecause }
}
