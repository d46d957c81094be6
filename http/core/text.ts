/**
 * Text a request hands over that Postgres cannot hold: a `text` value never contains NUL
 * (U+0000), and a JavaScript string with an unpaired UTF-16 surrogate has no UTF-8 form (the
 * driver would silently send U+FFFD instead). Both are refused as the client's error before
 * any query runs, never left for the database to refuse (which a breaker could take for an
 * outage).
 */

/** Whether every surrogate in `text` is half of a pair (one pass). */
const wellFormed = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0xd800 || code > 0xdfff) continue
    const next = text.charCodeAt(i + 1)
    if (code > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) return false
    i++
  }
  return true
}

/** What is wrong with `text` as a value for Postgres, or undefined when nothing is. */
export const textProblem = (text: string): string | undefined => {
  if (text.includes("\u0000")) return "contains a NUL character (U+0000)"
  if (!wellFormed(text)) return "contains an unpaired UTF-16 surrogate"
  return undefined
}
