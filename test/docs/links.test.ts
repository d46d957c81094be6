/**
 * The documents cannot rot silently: in README.md and docs/*.md every relative link names a file
 * that exists (and, with a `#fragment` into a Markdown file, one of its headings), and every
 * repository path they mention (`pipeline/reduce/positions.ts`, `http/backend/markets/`, in prose,
 * backticks or a fenced picture alike) exists. Reads files only: no database, no server.
 */
import * as fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { ROOT } from "../support/process.js"

/** The folders at the repository's top a mentioned path may start with. */
const TOP = ["src", "http", "pipeline", "schema", "tools", "test", "bench", "bin", "migrations", "fixtures", "docs"]

/**
 * A repository path: a top folder, then path characters, ending on a word character or a slash
 * (so the full stop after `src/main.ts.` is not part of it), and not itself the tail of a longer
 * path or URL (`.data/bench`, `ws://host/ws/realtime`). A placeholder (`http/backend/<feature>/`)
 * is checked up to where it stops being a plain path; a glob (`fixtures/devnet.*`) must match a file.
 */
const PATH = new RegExp(`(?<![\\w./:-])(?:${TOP.join("|")})/(?:[\\w./-]*[\\w/])?`, "g")

/** A file name alone in backticks (`sessions.ts`): some file of the repository must have that name. */
const BARE_NAME = /`([\w.-]+\.(?:ts|mts|mjs|sql|sol))`/g

/** `[text](target)` links (images too); the target up to the first space or closing parenthesis. */
const LINK = /\]\(([^)\s]+)\)/g

/** GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to hyphens. */
const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/`/g, "")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-")

const headings = (text: string): Set<string> =>
  new Set(
    text
      .replace(/^```[\s\S]*?^```/gm, "")
      .split("\n")
      .flatMap((line) => (/^#{1,6} /.test(line) ? [slug(line.replace(/^#+ /, ""))] : []))
  )

/** The names of the files under the top folders and at the top of `root`. */
const fileNames = (root: string): Set<string> => {
  const names = new Set<string>()
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(Path.join(dir, entry.name))
      else names.add(entry.name)
    }
  }
  for (const entry of fs.readdirSync(root, { withFileTypes: true })) {
    if (entry.isDirectory() && TOP.includes(entry.name)) walk(Path.join(root, entry.name))
    else if (entry.isFile()) names.add(entry.name)
  }
  return names
}

/** Whether `mention` exists, or with a glob after it (`fixtures/devnet.*`), whether a file matches. */
const exists = (root: string, mention: string, after: string): boolean => {
  const glob = /^\.?\*/.exec(after)
  if (glob === null) return fs.existsSync(Path.join(root, mention))
  const prefix = mention + glob[0].slice(0, -1)
  const dir = Path.join(root, Path.dirname(prefix))
  return fs.existsSync(dir) && fs.readdirSync(dir).some((name) => name.startsWith(Path.basename(prefix)))
}

/** What is wrong with the links and paths of one document (`file`, relative to `root`), one line each. */
const problems = (root: string, file: string, text: string, names: Set<string> = fileNames(root)): Array<string> => {
  const found: Array<string> = []
  const dir = Path.dirname(file)
  for (const [, target] of text.matchAll(LINK)) {
    if (/^[a-z][a-z+.-]*:/i.test(target!)) continue // http:, https:, mailto:
    const [pathPart, fragment] = target!.split("#") as [string, string | undefined]
    const resolved = pathPart === "" ? file : Path.normalize(Path.join(dir, decodeURIComponent(pathPart)))
    const absolute = Path.join(root, resolved)
    if (!fs.existsSync(absolute)) {
      found.push(`${file}: link to ${target}: no file ${resolved}`)
      continue
    }
    if (fragment !== undefined && resolved.endsWith(".md") && !headings(fs.readFileSync(absolute, "utf8")).has(fragment)) {
      found.push(`${file}: link to ${target}: ${resolved} has no heading #${fragment}`)
    }
  }
  // Link targets were checked above; the prose around them is checked here.
  const prose = text.replace(LINK, "]()")
  for (const match of prose.matchAll(PATH)) {
    const mention = match[0]
    if (!exists(root, mention, prose.slice(match.index + mention.length))) found.push(`${file}: mentions ${mention}, which does not exist`)
  }
  for (const [, name] of text.matchAll(BARE_NAME)) {
    if (!names.has(name!)) found.push(`${file}: names ${name}, which no file of the repository is called`)
  }
  return found
}

const documents = (): Array<string> => [
  "README.md",
  ...fs
    .readdirSync(Path.join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`)
]

describe("the documents", () => {
  it("link only to files and headings that exist, and mention only paths that exist", () => {
    const names = fileNames(ROOT)
    const all = documents().flatMap((file) => problems(ROOT, file, fs.readFileSync(Path.join(ROOT, file), "utf8"), names))
    expect(all).toEqual([])
  })

  it("README links every document in docs/", () => {
    const readme = fs.readFileSync(Path.join(ROOT, "README.md"), "utf8")
    const linked = new Set([...readme.matchAll(LINK)].map(([, target]) => target!.split("#")[0]))
    expect(documents().filter((file) => file !== "README.md" && !linked.has(file))).toEqual([])
  })

  it("the check itself finds a dead link, a missing heading, a missing path and an unknown file name", () => {
    const text = [
      "See [the API](docs/no-such.md), [settings](docs/settings.md#no-such-heading) and [tests](docs/testing.md).",
      "Reducers live in `pipeline/reduce/no-such.ts`; the picture names pipeline/no-such-dir/run.ts too.",
      "The recordings are `fixtures/no-such.*`; the handlers are in `no-such-handlers.ts`.",
      "Fine: [web](https://example.com), `pipeline/reduce/positions.ts`, `fixtures/devnet.*`, `sessions.ts`,",
      "[the rules](docs/positions.md#positions-and-pl), .data/bench, ws://127.0.0.1:3000/ws/realtime."
    ].join("\n")
    expect(problems(ROOT, "README.md", text)).toEqual([
      "README.md: link to docs/no-such.md: no file docs/no-such.md",
      "README.md: link to docs/settings.md#no-such-heading: docs/settings.md has no heading #no-such-heading",
      "README.md: mentions pipeline/reduce/no-such.ts, which does not exist",
      "README.md: mentions pipeline/no-such-dir/run.ts, which does not exist",
      "README.md: mentions fixtures/no-such, which does not exist",
      "README.md: names no-such-handlers.ts, which no file of the repository is called"
    ])
  })

  it("anchors are made as GitHub makes them", () => {
    expect(slug("Positions and P&L")).toBe("positions-and-pl")
    expect(slug("The live local chain (the default when no `RPC_URL` is set)")).toBe(
      "the-live-local-chain-the-default-when-no-rpc_url-is-set"
    )
  })
})
