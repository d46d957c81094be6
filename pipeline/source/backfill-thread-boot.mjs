// Entry of the backfill thread (backfill-thread.ts): a worker does not inherit the loader hooks
// of the thread that starts it, so TypeScript support is registered here before the real entry.
import { workerData } from "node:worker_threads"
import { register } from "tsx/esm/api"

register()
await import(workerData.entry)
