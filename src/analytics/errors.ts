/**
 * The ways an export can fail, each with a message that says what to do about it. The CLI prints
 * `message` and exits 1; nothing here is a defect.
 */
import { Data } from "effect"

/** The source database cannot be reached, or holds nothing that can be snapshotted yet. */
export class SnapshotSourceError extends Data.TaggedError("SnapshotSourceError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * A value does not fit the analysis type chosen for its column (a DECIMAL(38,x) holds fewer than
 * 39 digits, a TIMESTAMP about ±290,000 years). Named precisely rather than truncated.
 */
export class ValueOutOfRange extends Data.TaggedError("ValueOutOfRange")<{
  readonly table: string
  readonly column: string
  readonly value: string
  readonly message: string
}> {}

/**
 * The undo log holds images of a table this exporter does not know how to read, so the
 * finalized state of that table cannot be reconstructed. (`--include-unfinalized` still works.)
 */
export class UnknownUndoTable extends Data.TaggedError("UnknownUndoTable")<{
  readonly table: string
  readonly message: string
}> {}

/** Reading or writing the DuckDB file or the Parquet files failed. */
export class SnapshotWriteError extends Data.TaggedError("SnapshotWriteError")<{
  readonly path: string
  readonly message: string
  readonly cause?: unknown
}> {}

export type ExportError = SnapshotSourceError | ValueOutOfRange | UnknownUndoTable | SnapshotWriteError

export const isExportError = (error: unknown): error is ExportError =>
  error instanceof SnapshotSourceError ||
  error instanceof SnapshotWriteError ||
  error instanceof UnknownUndoTable ||
  error instanceof ValueOutOfRange

export const messageOf = (error: unknown) => String((error as Error)?.message ?? error)

/**
 * An error of `what` as an ExportError: kept when it already is one; a Postgres error (it
 * carries the server's severity) is the source's; anything else failed on the writing side.
 */
export const exportErrorOf =
  (path: string, what: string) =>
  (error: unknown): ExportError =>
    isExportError(error)
      ? error
      : typeof (error as { severity?: unknown })?.severity === "string"
        ? new SnapshotSourceError({ message: `${what}: ${messageOf(error)}`, cause: error })
        : new SnapshotWriteError({ path, message: `${what}: ${messageOf(error)}`, cause: error })
