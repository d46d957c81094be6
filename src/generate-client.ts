/**
 * `npm run client:generate`: writes the typed client's generated types (`client/<api>.d.ts`)
 * from the API definitions, with no server running. Run it after changing an endpoint; the
 * drift test (`test/client/drift.test.ts`) fails until it has been.
 */
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import { PROJECT_ROOT } from "../schema/io/project-root.js"
import { renderAllClientTypes } from "./client-types.js"

for (const { path, text } of await renderAllClientTypes()) {
  const before = await fs.readFile(path, "utf8").catch(() => undefined)
  await fs.writeFile(path, text)
  console.log(`${Path.relative(PROJECT_ROOT, path)}: ${before === text ? "unchanged" : "written"} (${text.length} characters)`)
}
