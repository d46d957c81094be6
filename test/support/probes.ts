/**
 * Polling and raw JSON-RPC for the tests that drive a live chain or a whole `predix start`.
 */

/**
 * Polls `condition` every 200 ms until it holds; a condition that throws has not held yet.
 * Rejects with `what` after `timeoutMs` (a hang guard, not a measurement).
 */
export const eventually = async (what: string, condition: () => Promise<boolean> | boolean, timeoutMs = 60_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (
    !(await Promise.resolve()
      .then(condition)
      .catch(() => false))
  ) {
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/** One JSON-RPC call to the node at `url`; its result, or an error naming the method. */
export const jsonRpc = async (url: string, method: string, params: ReadonlyArray<unknown> = []): Promise<unknown> => {
  const answer = (await (
    await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params })
    })
  ).json()) as { result?: unknown; error?: { message: string } }
  if (answer.error !== undefined) throw new Error(`${method}: ${answer.error.message}`)
  return answer.result
}
