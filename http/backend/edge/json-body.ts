/**
 * A JSON request body read and checked once, before any route decodes it: whatever its shape, a
 * body that is not JSON, nests deeper than `MAX_BODY_DEPTH`, or holds a string (or a key) that
 * Postgres cannot store (`http/core/text.ts`) is the client's error, never a crash further on
 * (a body of 20,000 `[` overflowed the stack of the schema decoder's error messages).
 *
 * Invariant: the work is linear in the body's length and uses constant stack: the depth is
 * counted by a scan of the text before `JSON.parse` runs, and the parsed value is walked with an
 * explicit stack.
 */
import { textProblem } from "../../core/text.js"

/** Deepest nesting of arrays and objects a body may have (the deepest route body nests 4). */
export const MAX_BODY_DEPTH = 32

export type BodyCheck =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly path: string; readonly problem: string }

/** The deepest nesting of `[`/`{` in JSON text, counting only brackets outside strings. */
const depthOf = (text: string, limit: number): number => {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (inString) {
      if (code === 92)
        i++ // a backslash escapes the next character
      else if (code === 34) inString = false
    } else if (code === 34) inString = true
    else if (code === 91 || code === 123) {
      depth++
      if (depth > deepest) deepest = depth
      if (deepest > limit) return deepest
    } else if (code === 93 || code === 125) depth--
  }
  return deepest
}

/** Checks the body text of a JSON request (an empty body is `null`, as HttpApi reads it). */
export const checkJsonBody = (text: string, maxDepth: number = MAX_BODY_DEPTH): BodyCheck => {
  if (depthOf(text, maxDepth) > maxDepth) return { ok: false, path: "", problem: `the body nests deeper than ${maxDepth} levels` }
  let value: unknown
  try {
    value = text === "" ? null : JSON.parse(text)
  } catch {
    return { ok: false, path: "", problem: "the body is not valid JSON" }
  }
  const pending: Array<readonly [unknown, string]> = [[value, ""]]
  while (pending.length > 0) {
    const [item, path] = pending.pop()!
    if (typeof item === "string") {
      const problem = textProblem(item)
      if (problem !== undefined) return { ok: false, path, problem: `${path === "" ? "the body" : path} ${problem}` }
    } else if (Array.isArray(item)) {
      item.forEach((element, index) => pending.push([element, path === "" ? String(index) : `${path}.${index}`]))
    } else if (typeof item === "object" && item !== null) {
      for (const [key, element] of Object.entries(item)) {
        const problem = textProblem(key)
        if (problem !== undefined) return { ok: false, path, problem: `a key of ${path === "" ? "the body" : path} ${problem}` }
        pending.push([element, path === "" ? key : `${path}.${key}`])
      }
    }
  }
  return { ok: true, value }
}
