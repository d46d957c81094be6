import pg from "pg"
import { WireCounters } from "/work/wt-counters/src/db/wire-counters.ts"
const c = new WireCounters()
const s = c.stream as any
const client = new pg.Client({ connectionString: "postgres://postgres@127.0.0.1:5432/postgres", stream: (cfg: any) => { const x = s(cfg); const w = x.write.bind(x); x.write = (b: any, ...r: any[]) => { console.log("write", b.length, b.subarray(0, 9)); return w(b, ...r) }; return x } })
await client.connect(); await client.query("select 1"); await client.end(); console.log(c.snapshot())
