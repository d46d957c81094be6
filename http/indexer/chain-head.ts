/**
 * The chain's head as the node itself says it (`eth_blockNumber`), for health: the indexer's own
 * record of the head is written by the indexer, so a stalled indexer would compare itself with
 * its own stale write and look current.
 *
 * Invariants: one request at a time per reader (a node that hangs costs one open request, never a
 * pile of them), each bounded by `timeoutMs`; only http(s) endpoints are asked (a ws(s) RPC_URL
 * leaves the head to the indexer's record, see `health-watch.ts`).
 */

export interface ChainHeadReading {
  /** The head the node last gave; null before its first answer. */
  readonly block: number | null
  /** `Date.now()` of the node's last answer; null before the first. */
  readonly at: number | null
  /** Why the last attempt failed; null when it answered. */
  readonly error: string | null
}

export interface ChainHeadReader {
  /** What the node last said; never waits. */
  readonly latest: () => ChainHeadReading
  /** Asks the node again unless a request is already out; resolves when that request has ended. */
  readonly refresh: () => Promise<void>
}

/** Whether `url` is an endpoint this reader can ask (plain HTTP JSON-RPC). */
export const askable = (url: string): boolean => /^https?:\/\//i.test(url)

const parseQuantity = (result: unknown): number | undefined =>
  typeof result === "string" && /^0x[0-9a-f]{1,13}$/i.test(result) ? Number.parseInt(result, 16) : undefined

export const makeChainHeadReader = (url: string, timeoutMs: number): ChainHeadReader => {
  let reading: ChainHeadReading = { block: null, at: null, error: null }
  let inFlight: Promise<void> | undefined
  const ask = async (): Promise<void> => {
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
        signal: AbortSignal.timeout(timeoutMs)
      })
      const body = (await response.json()) as { result?: unknown }
      const block = parseQuantity(body.result)
      if (!response.ok || block === undefined) throw new Error(`unexpected answer (HTTP ${response.status})`)
      reading = { block, at: Date.now(), error: null }
    } catch (error) {
      // The URL may carry a key: say what failed, never where.
      const cause = error instanceof Error ? (error.name === "TimeoutError" ? `no answer within ${timeoutMs} ms` : error.message) : "failed"
      reading = { ...reading, error: cause }
    }
  }
  return {
    latest: () => reading,
    refresh: () => (inFlight ??= ask().finally(() => (inFlight = undefined)))
  }
}
