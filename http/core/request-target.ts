/**
 * The request target as the indexer and backend APIs read it, parsed once: path segments and query pairs,
 * percent-decoded, and the canonical URL the router is handed.
 *
 * Routing, decoding and the answer cache all read this one parse, so no spelling of a request
 * (absolute form `GET http://host/api/health`, `%6D` for `m`, `%zz`, `;`, `+` or `%20`) can be
 * routed one way and cached another.
 *
 * Invariants:
 * - absolute-form targets (`http://host/path?query`, any case of the scheme) are read by their
 *   path and query; any other target not starting with `/` has no parse (the router 404s it);
 * - decoding is total and lenient, as browsers' `URLSearchParams` decode: a valid `%XX` is a
 *   byte, an invalid `%` is itself, invalid UTF-8 becomes U+FFFD, and in the query `+` is a space;
 * - `url` encodes every decoded segment, key and value once with `encodeURIComponent`, so the
 *   router and its query parser decode exactly the values parsed here (a `/` or `;` inside a
 *   segment stays inside it);
 * - `utf8` says whether every percent-encoded byte sequence was valid UTF-8: the indexer reads
 *   the lenient values regardless, the backend refuses such a target (its text reaches Postgres);
 * - the work is linear in the target's length: no pattern runs on it.
 */

export interface RequestTarget {
  /** Decoded path segments: `/api/markets/1` is `["api", "markets", "1"]`. */
  readonly segments: ReadonlyArray<string>
  /** Decoded query pairs in the order sent; `?limit` alone is `["limit", ""]`. */
  readonly query: ReadonlyArray<readonly [string, string]>
  /** Origin-form, canonically encoded: what the router sees. */
  readonly url: string
  /** False when some segment, key or value held bytes that are not UTF-8 (decoded as U+FFFD). */
  readonly utf8: boolean
}

const utf8 = new TextDecoder("utf-8", { fatal: false })
const strictUtf8 = new TextDecoder("utf-8", { fatal: true })
const encoder = new TextEncoder()

const hexValue = (code: number): number =>
  code >= 48 && code <= 57 ? code - 48 : code >= 65 && code <= 70 ? code - 55 : code >= 97 && code <= 102 ? code - 87 : -1

/** Percent-decodes `text` leniently (see the invariants); `plus` turns `+` into a space. */
export const percentDecode = (text: string, plus: boolean): string => decodeChecked(text, plus).text

/** `text` percent-decoded, and whether its bytes were valid UTF-8. */
const decodeChecked = (text: string, plus: boolean): { readonly text: string; readonly utf8: boolean } => {
  let plain = true
  for (let i = 0; i < text.length && plain; i++) {
    const code = text.charCodeAt(i)
    plain = code !== 37 && code < 128 && !(plus && code === 43)
  }
  if (plain) return { text, utf8: true }
  const bytes: Array<number> = []
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    const high = code === 37 ? hexValue(text.charCodeAt(i + 1)) : -1
    const low = high >= 0 ? hexValue(text.charCodeAt(i + 2)) : -1
    if (low >= 0) {
      bytes.push(high * 16 + low)
      i += 2
    } else if (code === 43 && plus) {
      bytes.push(32)
    } else if (code < 256) {
      // Node hands the target's raw bytes over as Latin-1 characters.
      bytes.push(code)
    } else {
      for (const byte of encoder.encode(text[i])) bytes.push(byte)
    }
  }
  const array = Uint8Array.from(bytes)
  try {
    return { text: strictUtf8.decode(array), utf8: true }
  } catch {
    return { text: utf8.decode(array), utf8: false }
  }
}

/** Where the path starts in an absolute-form target (`http://host/...`), or -1 when it is none. */
const absolutePathStart = (raw: string): number => {
  const scheme = raw.slice(0, 8).toLowerCase()
  const authority = scheme.startsWith("http://") ? 7 : scheme.startsWith("https://") ? 8 : -1
  if (authority === -1) return -1
  for (let i = authority; i < raw.length; i++) {
    const code = raw.charCodeAt(i)
    if (code === 47 || code === 63) return i // "/" or "?"
  }
  return raw.length
}

/** Parses a request target (`request.url`); undefined when it is neither origin- nor absolute-form. */
export const parseTarget = (raw: string): RequestTarget | undefined => {
  let target = raw
  if (!target.startsWith("/")) {
    const start = absolutePathStart(target)
    if (start === -1) return undefined
    target = target.slice(start)
    if (!target.startsWith("/")) target = `/${target}`
  }
  const hash = target.indexOf("#")
  if (hash !== -1) target = target.slice(0, hash)
  const mark = target.indexOf("?")
  const path = mark === -1 ? target : target.slice(0, mark)
  const search = mark === -1 ? "" : target.slice(mark + 1)
  let wellFormed = true
  const decode = (text: string, plus: boolean) => {
    const decoded = decodeChecked(text, plus)
    wellFormed &&= decoded.utf8
    return decoded.text
  }
  const segments = path
    .slice(1)
    .split("/")
    .map((segment) => decode(segment, false))
  const query: Array<readonly [string, string]> = []
  for (const piece of search.split("&")) {
    if (piece === "") continue
    const equals = piece.indexOf("=")
    query.push(equals === -1 ? [decode(piece, true), ""] : [decode(piece.slice(0, equals), true), decode(piece.slice(equals + 1), true)])
  }
  const encodedPath = `/${segments.map(encodeURIComponent).join("/")}`
  const encodedQuery = query.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`).join("&")
  return { segments, query, url: encodedQuery === "" ? encodedPath : `${encodedPath}?${encodedQuery}`, utf8: wellFormed }
}
