/** What build is running (package version and git commit), for `/version`; provided by `src/build-info.ts`. */
import { Context } from "effect"

export interface BuildInfoShape {
  readonly version: string
  readonly commit: string
}

export class BuildInfo extends Context.Tag("predix/BuildInfo")<BuildInfo, BuildInfoShape>() {}
