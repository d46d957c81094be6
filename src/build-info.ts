/**
 * What build is running: the package version and the git commit, read once at start.
 * `GIT_COMMIT` (set by a deploy) wins; otherwise the checkout's HEAD; otherwise "unknown".
 */
import { Effect, Layer } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs/promises"
import * as Path from "node:path"

const ROOT = PROJECT_ROOT

import { BuildInfo } from "../http/backend/system/build-info.js"
import { PROJECT_ROOT } from "../schema/io/project-root.js"

export { BuildInfo, type BuildInfoShape } from "../http/backend/system/build-info.js"

const packageVersion = Effect.promise(() => fs.readFile(Path.join(ROOT, "package.json"), "utf8")).pipe(
  Effect.map((text) => String((JSON.parse(text) as { version?: unknown }).version ?? "unknown"))
)

const gitHead = Effect.async<string>((resume) => {
  execFile("git", ["rev-parse", "HEAD"], { cwd: ROOT }, (error, stdout) => resume(Effect.succeed(error ? "unknown" : stdout.trim())))
})

/** The running build, read once. */
export const BuildInfoLive = Layer.effect(
  BuildInfo,
  Effect.all({
    version: packageVersion,
    commit: process.env["GIT_COMMIT"] ? Effect.succeed(process.env["GIT_COMMIT"]) : gitHead
  })
)
