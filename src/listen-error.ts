/**
 * A server that cannot listen says which port, which setting and why: the platform's error has
 * an empty message, so `predix: ` alone was printed.
 */
import { HttpServerError } from "@effect/platform"
import { Data, Layer } from "effect"

export class ListenFailed extends Data.TaggedError("ListenFailed")<{ readonly message: string }> {}

/** What went wrong listening on `host`:`port`, which `setting` (e.g. BACKEND_PORT) configured. */
export const describeListenFailure = (cause: unknown, where: { setting: string; host: string; port: number }): string => {
  const error = cause as { code?: unknown; message?: unknown }
  const at = `port ${where.port} (${where.setting}) on ${where.host}`
  switch (error.code) {
    case "EADDRINUSE":
      return `${at} is already in use; stop what listens there or choose another ${where.setting}`
    case "EACCES":
      return `${at} needs privileges this process lacks; choose a port above 1023`
    case "EADDRNOTAVAIL":
      return `cannot listen on ${at}: HOST ${where.host} is not an address of this machine`
    default:
      return `cannot listen on ${at}: ${typeof error.message === "string" && error.message !== "" ? error.message : String(cause)}`
  }
}

/** `layer` with its listen failure (the platform's ServeError) turned into a `ListenFailed` naming the setting. */
export const namingListenFailure =
  (where: { setting: string; host: string; port: number }) =>
  <A, E, R>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E | ListenFailed, R> =>
    Layer.catchAll(layer, (error) =>
      Layer.fail(
        error instanceof HttpServerError.ServeError ? new ListenFailed({ message: describeListenFailure(error.cause, where) }) : error
      )
    )
