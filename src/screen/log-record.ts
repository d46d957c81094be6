/**
 * One log line as data: what the start screen reads (its URLs, its progress bar) and prints, and
 * what the indexer child sends its parent over the IPC channel when the parent owns the screen.
 *
 * Invariant: a record holds only what the logfmt line would print (level, message, annotations
 * as text, cause as text), so the screen can never show more than the logs do.
 */
import { Array as Arr, Cause, HashMap, Inspectable, type Logger } from "effect"

export interface LogRecord {
  /** Epoch milliseconds. */
  readonly time: number
  /** `LogLevel.label`: TRACE, DEBUG, INFO, WARN, ERROR, FATAL. */
  readonly level: string
  readonly message: string
  /** Each annotation as logfmt prints it (numbers and strings as their text). */
  readonly fields: Readonly<Record<string, string>>
  /** `Cause.pretty`, when the line carries a cause. */
  readonly cause?: string
}

/** The record of one Effect log call. */
export const fromLoggerOptions = (options: Logger.Logger.Options<unknown>): LogRecord => {
  const fields: Record<string, string> = {}
  for (const [key, value] of HashMap.toEntries(options.annotations)) fields[key] = Inspectable.toStringUnknown(value, 0)
  const message = Arr.ensure(options.message)
    .map((part) => Inspectable.toStringUnknown(part, 0))
    .join(" ")
  const record = { time: options.date.getTime(), level: options.logLevel.label, message, fields }
  return Cause.isEmptyType(options.cause) ? record : { ...record, cause: Cause.pretty(options.cause, { renderErrorCause: true }) }
}

/** The IPC envelope of a record the indexer child forwards (`{ predixLog: record }`). */
export interface ForwardedRecord {
  readonly predixLog: LogRecord
}

const isStringRecord = (value: unknown): value is Record<string, string> =>
  typeof value === "object" && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === "string")

/**
 * The record an IPC message carries, or undefined for any other message. Checked field by field:
 * the channel is our own child's, but a malformed message must not break the screen.
 */
export const forwardedRecord = (message: unknown): LogRecord | undefined => {
  if (typeof message !== "object" || message === null || !("predixLog" in message)) return undefined
  const r = (message as { predixLog: unknown }).predixLog
  if (typeof r !== "object" || r === null) return undefined
  const { time, level, message: text, fields, cause } = r as Record<string, unknown>
  if (typeof time !== "number" || typeof level !== "string" || typeof text !== "string" || !isStringRecord(fields)) return undefined
  if (cause !== undefined && typeof cause !== "string") return undefined
  return cause === undefined ? { time, level, message: text, fields } : { time, level, message: text, fields, cause }
}
