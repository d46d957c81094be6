import pg from "pg"
import { WireCounters } from "../src/db/wire-counters.ts"
const c = new WireCounters()
let sock: any
const client = new pg.Client({ connectionString: "postgres://postgres@127.0.0.1:5432/postgres", stream: (cfg: any) => (sock = (c.stream as any)(cfg)) })
await client.connect()
console.log(sock.constructor.name, sock.write === (await import("node:net")).Socket.prototype.write, Object.getOwnPropertyNames(Object.getPrototypeOf(sock)), (client as any).connection.stream === sock)
await client.query("select 1"); await client.end(); console.log(c.snapshot())
