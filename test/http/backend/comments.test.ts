/**
 * Comments and the notifications of the backend's own data over real HTTP against a copy of the
 * indexed fixture (its markets are commented on): threads and paging, the posting limits held
 * by the database under 1,000 concurrent posts, the author's edit window and soft delete,
 * moderator hiding, and the read/unread flows of reply notifications (another user's id: 404; a
 * malformed id: 400).
 * Time is each instance's own clock, moved by the test.
 */
import { Agent, request } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts"
import { signIn, startBackends, type Backends, type Instance } from "./support/auth-harness.js"

let backends: Backends
let api: Instance
const users = Array.from({ length: 10 }, () => privateKeyToAccount(generatePrivateKey()))
const cookies = new Map<PrivateKeyAccount, string>()
const [alice, bob, carol, mod] = users as [PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount]

const as = (account: PrivateKeyAccount, body?: unknown) => ({
  headers: { cookie: `predix_session=${cookies.get(account)}` },
  ...(body === undefined ? {} : { body })
})
const MARKET = "/api/markets/1/comments"
/** Moves the instance's clock past the cooldown. */
const later = (instance: Instance, seconds = 31) => void (instance.clock.offsetMs += seconds * 1000)

const signInAll = async (instance: Instance) => {
  for (const user of users) {
    const { cookie } = await signIn(instance, user)
    if (cookie === undefined) throw new Error("no session cookie")
    cookies.set(user, cookie)
  }
}

beforeAll(async () => {
  backends = await startBackends({ indexed: true })
  api = await backends.start({ comments: { cooldownSeconds: 30, perDay: 50, editWindowSeconds: 900 } })
  await signInAll(api)
  await backends.sql(`update app_user set role = 'moderator' where address = $1`, [mod.address.toLowerCase()])
}, 180_000)
afterAll(async () => {
  await backends?.close()
})

describe("comments", () => {
  it("documents every comment and notification operation with its session requirement, and bodies as plain text", async () => {
    const document: any = await (await fetch(`${api.url}/api/openapi.json`)).json()
    const security = (path: string, method: string) => document.paths[path]?.[method]?.security
    expect(security("/api/markets/{idOrSlug}/comments", "get") ?? []).toEqual([])
    for (const [path, method] of [
      ["/api/markets/{idOrSlug}/comments", "post"],
      ["/api/markets/{idOrSlug}/comments/{commentId}", "patch"],
      ["/api/notifications", "get"],
      ["/api/notifications/unread-count", "get"],
      ["/api/notifications/{notificationId}/read", "patch"],
      ["/api/notifications/read-all", "post"]
    ])
      expect(security(path!, method!)).toEqual([{ session: [] }])
    expect(document.components.schemas.CommentBody.description).toMatch(/never rendered as HTML/)
  })

  it("threads two levels, sorts new and top, pages with the envelope, stores text as written", async () => {
    const posted: Array<any> = []
    for (const body of ["first <b>not html</b>", "second", "third"]) {
      const answer = await api.call("POST", MARKET, as(alice, { body }))
      expect(answer.status).toBe(201)
      posted.push(answer.body.data)
      later(api)
    }
    expect(posted[0]).toMatchObject({
      body: "first <b>not html</b>",
      author: alice.address.toLowerCase(),
      parentId: null,
      status: "visible",
      replyCount: 0,
      editedAt: null
    })
    expect(posted[0].marketId).toBe(`0x${"0".repeat(63)}1`)
    for (const body of ["a reply", "another reply"]) {
      expect((await api.call("POST", MARKET, as(bob, { body, parentId: posted[0].id }))).status).toBe(201)
      later(api)
    }
    // Newest first; top puts the discussed comment first.
    const newest = await api.call("GET", MARKET)
    expect(newest.body.data.map((c: any) => c.body)).toEqual(["third", "second", "first <b>not html</b>"])
    expect(newest.body.meta.pagination).toEqual({ limit: 20, offset: 0, total: 3 })
    const top = await api.call("GET", `${MARKET}?sort=top`)
    expect(top.body.data.map((c: any) => [c.body, c.replyCount])).toEqual([
      ["first <b>not html</b>", 2],
      ["third", 0],
      ["second", 0]
    ])
    const page = await api.call("GET", `${MARKET}?limit=2&offset=2`)
    expect(page.body.data.map((c: any) => c.body)).toEqual(["first <b>not html</b>"])
    expect(page.body.meta.pagination).toEqual({ limit: 2, offset: 2, total: 3 })
    expect((await api.call("GET", `${MARKET}?offset=50`)).body.meta.pagination.total).toBe(3)
    const replies = await api.call("GET", `${MARKET}?parentId=${posted[0].id}`)
    expect(replies.body.data.map((c: any) => [c.body, c.parentId])).toEqual([
      ["another reply", posted[0].id],
      ["a reply", posted[0].id]
    ])
    // The same market by its slug, and another market's thread is its own.
    const [{ slug }] = (await backends.sql(`select slug from display_metadata where kind = 'market' and id = 1`)) as [{ slug: string }]
    expect((await api.call("GET", `/api/markets/${slug}/comments`)).body.meta.pagination.total).toBe(3)
    expect((await api.call("GET", "/api/markets/15/comments")).body.meta.pagination.total).toBe(0)

    // Refused and changing nothing: a reply to a reply, a parent of another market, bodies out of bounds, unknown market.
    const reply = replies.body.data[0]
    const refusals = [
      [MARKET, { body: "deeper", parentId: reply.id }, 400, "VALIDATION_FAILED"],
      ["/api/markets/15/comments", { body: "elsewhere", parentId: posted[0].id }, 400, "VALIDATION_FAILED"],
      [MARKET, { body: "" }, 400, "VALIDATION_FAILED"],
      [MARKET, { body: "   \n " }, 400, "VALIDATION_FAILED"],
      [MARKET, { body: "x".repeat(2_001) }, 400, "VALIDATION_FAILED"],
      [MARKET, { body: "nul\u0000" }, 400, "VALIDATION_FAILED"],
      [MARKET, { body: "ok", extra: 1 }, 400, "VALIDATION_FAILED"],
      ["/api/markets/999999/comments", { body: "nowhere" }, 404, "MARKET_NOT_FOUND"],
      ["/api/markets/0x12/comments", { body: "nowhere" }, 400, "INVALID_MARKET_ID"]
    ] as const
    for (const [path, body, status, code] of refusals) {
      const answer = await api.call("POST", path, as(carol, body))
      expect([answer.status, answer.body.code]).toEqual([status, code])
    }
    expect((await api.call("GET", `${MARKET}?parentId=${reply.id}`)).status).toBe(404)
    expect((await api.call("GET", `${MARKET}?parentId=999999999`)).status).toBe(404)
    for (const parentId of ["x", "0", "9223372036854775808"]) {
      const malformed = await api.call("GET", `${MARKET}?parentId=${parentId}`)
      expect([malformed.status, malformed.body.code, malformed.body.details?.[0]?.path], parentId).toEqual([
        400,
        "VALIDATION_FAILED",
        "parentId"
      ])
    }
    expect((await api.call("POST", MARKET, { body: { body: "anonymous" } })).body.code).toBe("AUTH_REQUIRED")
    expect((await backends.sql(`select count(*)::int as n from market_comment`))[0]!.n).toBe(5)
    // 2,000 characters (code points, an emoji is one) is the longest body; it comes back exactly.
    const longest = "😀".repeat(1_000) + "é".repeat(1_000)
    const long = await api.call("POST", MARKET, as(carol, { body: longest }))
    expect(long.status).toBe(201)
    expect((await api.call("GET", `${MARKET}?limit=1`)).body.data[0].body).toBe(longest)
    later(api)

    // Bob's replies notified Alice once each; nobody is notified of their own reply.
    expect((await api.call("POST", MARKET, as(alice, { body: "replying to myself", parentId: posted[0].id }))).status).toBe(201)
    later(api)
    const inbox = await api.call("GET", "/api/notifications", as(alice))
    expect(inbox.body.data.map((n: any) => [n.type, n.detail.author, n.read])).toEqual([
      ["commentReply", bob.address.toLowerCase(), false],
      ["commentReply", bob.address.toLowerCase(), false]
    ])
  })

  it("admits one post per cooldown and a day's cap per user, counted in the database", async () => {
    const first = await api.call("POST", MARKET, as(carol, { body: "one" }))
    expect(first.status).toBe(201)
    const again = await api.call("POST", MARKET, as(carol, { body: "two" }))
    expect([again.status, again.body.code]).toEqual([429, "RATE_LIMIT_EXCEEDED"])
    expect(again.body.message).toMatch(/one comment per 30 s; retry after 30 s/)
    later(api, 29)
    expect((await api.call("POST", MARKET, as(carol, { body: "two" }))).status).toBe(429)
    later(api, 2)
    expect((await api.call("POST", MARKET, as(carol, { body: "two" }))).status).toBe(201)
    // Refusals consumed nothing: Carol's count is her admitted posts (one earlier, two now).
    const [quota] = await backends.sql(`select posted_today from comment_quota where address = $1`, [carol.address.toLowerCase()])
    expect(quota!.posted_today).toBe(3)

    // The daily cap: an instance with no cooldown and 3 a day.
    const capped = await backends.start({ comments: { cooldownSeconds: 0, perDay: 3 } })
    capped.clock.offsetMs = api.clock.offsetMs + 86_400_000
    const statuses: Array<number> = []
    // Dave: his posts on later days must not hold back the other tests' posts (each instance has its own clock).
    const dave = users[4]!
    for (let i = 0; i < 4; i++) statuses.push((await capped.call("POST", MARKET, as(dave, { body: `day ${i}` }))).status)
    expect(statuses).toEqual([201, 201, 201, 429])
    capped.clock.offsetMs += 86_400_000
    expect((await capped.call("POST", MARKET, as(dave, { body: "next day" }))).status).toBe(201)
    await capped.close()
  })

  it("lets the author edit within the window and delete; moderators hide; anyone else is FORBIDDEN", async () => {
    const created = (await api.call("POST", MARKET, as(alice, { body: "draft" }))).body.data
    later(api)
    const at = `${MARKET}/${created.id}`
    // Another user's edit, delete or hide is refused and changes nothing.
    for (const body of [{ body: "hijacked" }, { status: "deleted" }, { status: "hidden" }]) {
      const refused = await api.call("PATCH", at, as(bob, body))
      expect([refused.status, refused.body.code]).toEqual([403, "FORBIDDEN"])
    }
    expect((await api.call("PATCH", at, { body: { body: "anonymous" } })).body.code).toBe("AUTH_REQUIRED")
    const edited = await api.call("PATCH", at, as(alice, { body: "final" }))
    expect(edited.status).toBe(200)
    expect(edited.body.data).toMatchObject({ body: "final", status: "visible" })
    expect(edited.body.data.editedAt).toBeGreaterThanOrEqual(created.createdAt)
    expect((await api.call("PATCH", at, as(alice, { body: "x", status: "deleted" }))).body.code).toBe("VALIDATION_FAILED")
    expect((await api.call("PATCH", at, as(alice, {}))).body.code).toBe("VALIDATION_FAILED")

    // The moderator hides: the body is gone from answers; the author can no longer edit or delete it.
    const hidden = await api.call("PATCH", at, as(mod, { status: "hidden" }))
    expect(hidden.body.data).toMatchObject({ status: "hidden", body: null })
    expect((await api.call("GET", `${MARKET}?limit=100`)).body.data.find((c: any) => c.id === created.id)).toMatchObject({
      status: "hidden",
      body: null
    })
    expect((await api.call("PATCH", at, as(alice, { body: "sneaky" }))).status).toBe(403)
    expect((await api.call("PATCH", at, as(alice, { status: "deleted" }))).status).toBe(403)
    expect((await api.call("PATCH", at, as(mod, { status: "visible" }))).body.data).toMatchObject({ status: "visible", body: "final" })

    // The window closes: no more edits, but the author may still delete (soft: the row stays).
    later(api, 901)
    const late = await api.call("PATCH", at, as(alice, { body: "too late" }))
    expect([late.status, late.body.message]).toEqual([403, expect.stringMatching(/edit window/)])
    expect((await api.call("PATCH", at, as(alice, { status: "deleted" }))).body.data).toMatchObject({ status: "deleted", body: null })
    const [row] = await backends.sql(`select body, status, removed_by from market_comment where id = $1`, [created.id])
    expect(row).toEqual({ body: "final", status: "deleted", removed_by: alice.address.toLowerCase() })

    // Unknown comment, a comment of another market: 404; a malformed id: 400; unknown market: MARKET_NOT_FOUND.
    expect((await api.call("PATCH", `${MARKET}/999999999`, as(alice, { status: "deleted" }))).status).toBe(404)
    expect((await api.call("PATCH", `/api/markets/15/comments/${created.id}`, as(alice, { status: "deleted" }))).status).toBe(404)
    for (const commentId of ["abc", "0", "-1", "9223372036854775808"]) {
      const malformed = await api.call("PATCH", `${MARKET}/${commentId}`, as(alice, { status: "deleted" }))
      expect([malformed.status, malformed.body.code, malformed.body.details?.[0]?.path], commentId).toEqual([
        400,
        "VALIDATION_FAILED",
        "commentId"
      ])
    }
    expect((await api.call("PATCH", `/api/markets/999999/comments/${created.id}`, as(alice, { status: "deleted" }))).body.code).toBe(
      "MARKET_NOT_FOUND"
    )
  })

  it("reads, counts and marks notifications of the user's own only; another user's id is a 404; muted types are not shown", async () => {
    const parent = (await api.call("POST", MARKET, as(carol, { body: "ask me" }))).body.data
    later(api)
    const reply = (await api.call("POST", MARKET, as(bob, { body: "answer", parentId: parent.id }))).body.data
    later(api)
    const count = async (user: PrivateKeyAccount) => (await api.call("GET", "/api/notifications/unread-count", as(user))).body.data.unread
    expect(await count(carol)).toBe(1)
    const [note] = (await api.call("GET", "/api/notifications?unread=true", as(carol))).body.data
    expect(note).toMatchObject({
      type: "commentReply",
      read: false,
      marketId: `0x${"0".repeat(63)}1`,
      detail: { commentId: reply.id, parentId: parent.id }
    })

    // Another user's notification: 404 for reading it, and it stays unread.
    const stolen = await api.call("PATCH", `/api/notifications/${note.id}/read`, as(bob))
    expect([stolen.status, stolen.body.code]).toEqual([404, "NOT_FOUND"])
    expect((await api.call("PATCH", "/api/notifications/999999999/read", as(bob))).status).toBe(404)
    // An id that cannot name a notification is the client's mistake: 400, naming the parameter.
    for (const id of ["x", "0", "-1", "01", "1.5", "9223372036854775808", "%00", "%E2%82%AC"]) {
      const malformed = await api.call("PATCH", `/api/notifications/${id}/read`, as(bob))
      expect([malformed.status, malformed.body.code], id).toEqual([400, "VALIDATION_FAILED"])
      // A NUL is refused earlier, by the front door's text check (http/core/text.ts), with its own words.
      expect(malformed.body.message, id).toMatch(/invalid notification id|contains a NUL/)
      expect(malformed.body.details, id).toEqual([
        { path: "notificationId", message: expect.stringMatching(/not a notification id|contains a NUL/) }
      ])
    }
    expect((await api.call("PATCH", "/api/notifications/9223372036854775807/read", as(bob))).body.code).toBe("NOT_FOUND")
    expect((await api.call("GET", "/api/notifications", as(bob))).body.data.some((n: any) => n.id === note.id)).toBe(false)
    expect(await count(carol)).toBe(1)

    const read = await api.call("PATCH", `/api/notifications/${note.id}/read`, as(carol))
    expect(read.body.data).toMatchObject({ id: note.id, read: true })
    expect(await count(carol)).toBe(0)
    expect((await api.call("GET", "/api/notifications?unread=true", as(carol))).body.data).toEqual([])
    expect((await api.call("GET", "/api/notifications", as(carol))).body.meta.pagination.total).toBe(1)

    // Alice's two reply notifications: read-all marks them, and only hers.
    expect(await count(alice)).toBe(2)
    expect((await api.call("POST", "/api/notifications/read-all", as(alice))).body.data).toEqual({ marked: 2 })
    expect(await count(alice)).toBe(0)
    expect((await api.call("POST", "/api/notifications/read-all", as(alice))).body.data).toEqual({ marked: 0 })

    // Muting a type hides it (kept, shown again when unmuted).
    const second = await api.call("POST", MARKET, as(alice, { body: "again", parentId: parent.id }))
    expect(second.status).toBe(201)
    later(api)
    expect(await count(carol)).toBe(1)
    await api.call("PATCH", "/api/auth/me/settings", as(carol, { notifications: { commentReply: false } }))
    expect(await count(carol)).toBe(0)
    expect((await api.call("GET", "/api/notifications", as(carol))).body.data).toEqual([])
    await api.call("PATCH", "/api/auth/me/settings", as(carol, { notifications: { commentReply: true } }))
    expect(await count(carol)).toBe(1)

    // A removed reply's notification is retracted.
    await api.call("PATCH", `${MARKET}/${second.body.data.id}`, as(alice, { status: "deleted" }))
    expect(await count(carol)).toBe(0)
    expect((await api.call("GET", "/api/notifications", { body: undefined })).body.code).toBe("AUTH_REQUIRED")
  })
  it("keeps every user's count right under 1,000 concurrent posts from 10 users", async () => {
    const burst = await backends.start({ comments: { cooldownSeconds: 0, perDay: 50 } })
    // Another UTC day than the other tests' posts (run last: it moves every user's last post days ahead) (sessions last 7 days).
    burst.clock.offsetMs = api.clock.offsetMs + 3 * 86_400_000
    const before = await backends.sql<{ author: string; n: number }>(
      `select author, count(*)::int as n from market_comment where market_id = 15 group by author`
    )
    expect(before).toEqual([])
    // All 1,000 are sent at once, over 100 keep-alive connections (one client cannot open 1,000 to a loopback server without resets).
    const agent = new Agent({ keepAlive: true, maxSockets: 100 })
    const post = (user: PrivateKeyAccount, body: string) =>
      new Promise<{ status: number }>((resolve, reject) => {
        const r = request(
          `${burst.url}/api/markets/15/comments`,
          { method: "POST", agent, headers: { "content-type": "application/json", cookie: `predix_session=${cookies.get(user)}` } },
          (response) => {
            response.resume()
            response.on("end", () => resolve({ status: response.statusCode ?? 0 }))
          }
        )
        r.on("error", reject)
        r.end(JSON.stringify({ body }))
      })
    const answers = await Promise.all(users.flatMap((user) => Array.from({ length: 100 }, (_, i) => post(user, `burst ${i}`))))
    agent.destroy()
    const byStatus = new Map<number, number>()
    for (const a of answers) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1)
    expect(Object.fromEntries(byStatus)).toEqual({ 201: 500, 429: 500 })
    const counts = await backends.sql<{ author: string; n: number }>(
      `select author, count(*)::int as n from market_comment where market_id = 15 group by author`
    )
    expect(counts.map((c) => c.n)).toEqual(Array(10).fill(50))
    const quotas = await backends.sql<{ posted_today: number }>(`select posted_today from comment_quota where address = any($1)`, [
      users.map((u) => u.address.toLowerCase())
    ])
    expect(quotas.map((q) => q.posted_today)).toEqual(Array(10).fill(50))
    expect((await burst.call("GET", "/api/markets/15/comments?limit=1")).body.meta.pagination.total).toBe(500)
    await burst.close()
  }, 120_000)
})
