/**
 * The blue-green re-index (docs/reindex.md, `src/blue-green.ts`) end to end: `predix start`
 * follows the replayed fixture while it advances; `predix reindex` has the indexer build a new
 * generation from the log store and switch to it, while requests go at a steady rate over real
 * HTTP to the indexer API and the backend API (a list and a detail each), and a WebSocket client
 * follows the order books and prices of the listed markets (not their trades: a fixture trade
 * priced above 1 USDC per share fails the stream's record, a bug of its own, not of the switch). Every request answers 200; the socket stays
 * open, with no error and no gap in any stream (each delta's `prev` is the seq before it); every indexer answer names one generation, the old one until the switch and the new one
 * after (never back); answers of one URL at one block and hash are the same in both generations;
 * after the switch the retired generation is dropped once its grace period ends, and the new
 * generation's tables equal a fresh index's at the same block.
 */
import { describe, expect, it } from "vitest"
import { Effect } from "effect"
import WebSocket from "ws"
import { generationCheckpoint, generationStates, query, scratchDatabaseUrl, tempDir } from "../support/postgres.js"
import { freePort, runCli, runningCli } from "../support/process.js"
import { servedFixtureAt, startEnv } from "../support/served-chain.js"
import { dumpIndex, freshIndexDump, onGeneration } from "./dump.js"

const until = async (what: string, ready: () => Promise<boolean>, timeoutMs = 120_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

interface Answer {
  readonly url: string
  readonly status: number
  readonly block: string | null
  readonly hash: string | null
  readonly generation: string | null
  readonly body: string
}

describe("blue-green re-index", () => {
  it(
    "requests at a steady rate through a re-index and its switch: no failure, one generation per answer, the new tables a fresh index's",
    () =>
      Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const dir = yield* tempDir("predix-blue-green")
            const { chain, server, deploymentFile } = yield* servedFixtureAt(dir, 0.6)
            const url = yield* scratchDatabaseUrl
            const [indexerPort, backendPort] = yield* Effect.promise(() => Promise.all([freePort(), freePort()]))
            const app = yield* runningCli(["start"], {
              ...startEnv(url, { server, deploymentFile }, indexerPort, backendPort),
              // The steady load comes from one address: no per-IP limit on it.
              RATE_LIMIT_PUBLIC_PER_MINUTE: "0"
            })
            const checkpointOf = (schema: string) => generationCheckpoint(url, schema)
            const generations = () => generationStates(url)

            const answers: Array<Answer> = []
            const failures: Array<string> = []
            const messages: Array<{ type: string; stream?: string; seq?: string; prev?: string }> = []
            let socketClosed: number | undefined
            let subscriptions = 0
            yield* Effect.promise(async () => {
              await app.waitFor(/message=listening server=backend/, 120_000)
              await until("the first head", async () => (await checkpointOf("public")) === chain.headNumber)

              const indexer = `http://127.0.0.1:${indexerPort}`
              const backend = `http://127.0.0.1:${backendPort}`
              const list = (await (await fetch(`${indexer}/api/markets?limit=5`)).json()) as { data: Array<{ id: string }> }
              const id = list.data[0]!.id
              const ws = new WebSocket(`ws://127.0.0.1:${backendPort}/ws/realtime`)
              await new Promise((resolve, reject) => {
                ws.once("open", resolve)
                ws.once("error", reject)
              })
              ws.on("message", (data) => {
                const message = JSON.parse(String(data)) as (typeof messages)[number]
                if (message.type === "ping") ws.send(JSON.stringify({ type: "pong" }))
                else messages.push(message)
              })
              ws.on("close", (code) => (socketClosed = code))
              for (const market of list.data)
                for (const topic of ["orderbook", "prices"]) {
                  ws.send(JSON.stringify({ type: "subscribe", topic, marketId: market.id }))
                  subscriptions += 1
                }
              const urls = [
                `${indexer}/api/markets?limit=5`,
                `${indexer}/api/markets/${id}`,
                `${backend}/api/markets?limit=5`,
                `${backend}/api/markets/${id}`
              ]
              // A steady rate: one request every 20 ms, in turn, until told to stop.
              let running = true
              const load = (async () => {
                for (let i = 0; running; i++) {
                  const target = urls[i % urls.length]!
                  const started = Date.now()
                  try {
                    const response = await fetch(target)
                    answers.push({
                      url: target,
                      status: response.status,
                      block: response.headers.get("x-indexed-block"),
                      hash: response.headers.get("x-indexed-block-hash"),
                      generation: response.headers.get("x-indexed-generation"),
                      body: await response.text()
                    })
                  } catch (error) {
                    failures.push(`${target}: ${String(error)}`)
                  }
                  await new Promise((r) => setTimeout(r, Math.max(0, 20 - (Date.now() - started))))
                }
              })()
              // The chain moves on meanwhile (the serving indexer follows it), a head every 200 ms.
              const advancing = setInterval(() => {
                if (chain.remaining > 1) chain.advance(1)
              }, 200)
              try {
                const reindex = runCli(["reindex", "--grace-seconds", "2"], { DATABASE_URL: url, LOG_LEVEL: "warning" })
                const code = await reindex.exited
                expect(code, reindex.output() + app.output()).toBe(0)
                expect(reindex.output()).toMatch(/switched: generation 2/)
                // Requests go on a while after the switch.
                await new Promise((r) => setTimeout(r, 1_500))
              } finally {
                clearInterval(advancing)
                running = false
                await load
              }
              expect(socketClosed, "the socket stayed open").toBeUndefined()
              ws.close()
              // The retired generation goes once its grace period is over.
              await until("the retired generation dropped", async () =>
                (await generations()).some((g) => g.schema === "public" && g.state === "dropped")
              )
              chain.advanceAll()
              await until("the new generation at the head", async () => (await checkpointOf("index_2")) === chain.headNumber)
            })

            expect(failures).toEqual([])
            // Distinct failures, each once (a failure repeats at the request rate).
            expect([
              ...new Set(answers.filter((a) => a.status !== 200).map((a) => `${a.url} ${a.status} ${a.body.slice(0, 300)}`))
            ]).toEqual([])
            expect(yield* Effect.promise(generations)).toEqual([
              { schema: "public", state: "dropped" },
              { schema: "index_2", state: "active" }
            ])

            // The stream: every subscription got its snapshot, no error, and no delta skipped a position.
            expect(JSON.stringify(messages.filter((m) => m.type === "error"))).toBe("[]")
            expect(messages.filter((m) => m.type === "snapshot").length).toBe(subscriptions)
            const held = new Map<string, string>()
            for (const m of messages) {
              if (m.type === "snapshot") held.set(m.stream!, m.seq!)
              if (m.type === "delta") {
                expect(m.prev, `stream ${m.stream}`).toBe(held.get(m.stream!))
                held.set(m.stream!, m.seq!)
              }
            }
            // Indexer answers: the old generation, then the new one, never back.
            const fromIndexer = answers.filter((a) => a.url.startsWith(`http://127.0.0.1:${indexerPort}`))
            const sequence = fromIndexer.map((a) => a.generation)
            const firstNew = sequence.indexOf("index_2")
            expect(firstNew, "an answer of the new generation").toBeGreaterThan(0)
            expect(sequence.slice(0, firstNew).every((g) => g === "public")).toBe(true)
            expect(sequence.slice(firstNew).every((g) => g === "index_2")).toBe(true)
            // At one block and hash, an URL answers the same from either generation (same code, same chain).
            const byState = new Map<string, string>()
            for (const a of fromIndexer) {
              const key = `${a.url} ${a.block} ${a.hash}`
              const seen = byState.get(key)
              if (seen === undefined) byState.set(key, a.body)
              else expect(a.body, key).toBe(seen)
            }
            // The public tables were emptied with the drop; the new ones are a fresh index's.
            expect((yield* query<{ n: number }>(url, `select count(*)::int as n from public.market`)).rows[0]!.n).toBe(0)
            const actual = yield* onGeneration(url, "index_2", dumpIndex)
            const expected = yield* freshIndexDump(server.url, chain.meta.deployment)
            expect(actual.checkpoint).toEqual(expected.checkpoint)
            expect(actual).toEqual(expected)
            app.child.kill("SIGINT")
            expect(yield* Effect.promise(() => app.exited)).toBe(0)
          })
        )
      ),
    300_000
  )
})
