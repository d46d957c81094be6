/**
 * Where the committed devnet recording is: a module of its own, so that what needs only the path
 * (the tests that replay the fixture) does not load the whole service with src/app.ts.
 */
import * as Path from "node:path"
import { PROJECT_ROOT } from "../schema/io/project-root.js"

/** The recording `npm start` indexes when no RPC_URL is set (regenerate with `npm run fixture`). */
export const FIXTURE_RECORDING = Path.join(PROJECT_ROOT, "fixtures/devnet.ndjson.gz")
