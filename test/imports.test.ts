/**
 * The house's floors, checked from the code's own imports: `schema` at the ground imports
 * nothing of ours (its rooms: the wire vocabulary at its top level, protocol math in
 * `schema/protocol` importing only itself, the two shared readers that do I/O in `schema/io`); `pipeline` and `http` stand beside each other on it (each imports `schema`
 * and itself, never the other, never `src`); `tools` (the devnet, recording and replay: tools
 * around the product) build on `schema` and `pipeline`; `client` (the typed client apps use)
 * imports only itself and the protocol math of `schema/protocol` (pure, viem only: an app bundles
 * it); `src` is the top. And no import cycles
 * among these files, type-only imports included (a cycle of types is still a tangle).
 */
import * as fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { ROOT } from "./support/process.js"

const FLOORS = ["schema", "pipeline", "http", "tools", "client", "src"] as const
type Floor = (typeof FLOORS)[number]
const MAY_IMPORT: Record<Floor, ReadonlyArray<Floor>> = {
  schema: ["schema"],
  pipeline: ["schema", "pipeline"],
  http: ["schema", "http"],
  tools: ["schema", "pipeline", "tools"],
  client: ["client", "schema"],
  src: FLOORS
}

const sourceFiles = (dir: string): Array<string> =>
  fs.readdirSync(Path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = Path.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return /\.(ts|mts|mjs)$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : []
  })

/** Relative imports and re-exports of `file` (static and dynamic), resolved to project paths. */
const importsOf = (file: string): Array<string> => {
  const text = fs.readFileSync(Path.join(ROOT, file), "utf8")
  const found: Array<string> = []
  for (const match of text.matchAll(
    /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+["'](\.{1,2}\/[^"']+)["']|import\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g
  )) {
    const spec = (match[1] ?? match[2])!
    let target = Path.normalize(Path.join(Path.dirname(file), spec)).replace(/\.js$/, ".ts")
    if (!fs.existsSync(Path.join(ROOT, target)) && fs.existsSync(Path.join(ROOT, target.replace(/\.ts$/, ".mjs")))) {
      target = target.replace(/\.ts$/, ".mjs")
    }
    found.push(target)
  }
  return found
}

/** The strongly connected components with more than one file (Tarjan). */
const cyclesOf = (edges: ReadonlyMap<string, ReadonlyArray<string>>): Array<Array<string>> => {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const cycles: Array<Array<string>> = []
  const visit = (v: string) => {
    index.set(v, next)
    low.set(v, next)
    next++
    stack.push(v)
    onStack.add(v)
    for (const w of edges.get(v) ?? []) {
      if (!edges.has(w)) continue
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) === index.get(v)) {
      const component: Array<string> = []
      let w: string
      do {
        w = stack.pop()!
        onStack.delete(w)
        component.push(w)
      } while (w !== v)
      if (component.length > 1) cycles.push(component.sort())
    }
  }
  for (const v of edges.keys()) if (!index.has(v)) visit(v)
  return cycles
}

describe("imports", () => {
  const files = FLOORS.flatMap(sourceFiles)
  const edges = new Map(files.map((file) => [file, importsOf(file)]))

  it("keep to the floors: schema imports nothing of ours, client only schema/protocol, pipeline and http only schema and themselves, tools only those below, src is the top", () => {
    const upward = files.flatMap((file) => {
      const from = file.split(Path.sep)[0] as Floor
      return edges
        .get(file)!
        .filter((target) => (FLOORS as ReadonlyArray<string>).includes(target.split(Path.sep)[0]!))
        .filter((target) => !MAY_IMPORT[from].includes(target.split(Path.sep)[0] as Floor))
        .map((target) => `${file} -> ${target}`)
    })
    expect(upward).toEqual([])
  })

  it("keep schema's rooms apart: protocol math (schema/protocol) imports only itself; the wire vocabulary imports no I/O (schema/io)", () => {
    const room = (file: string) =>
      file.startsWith(`schema${Path.sep}`) ? (file.split(Path.sep)[1]!.endsWith(".ts") ? "wire" : file.split(Path.sep)[1]!) : undefined
    const crossing = files.flatMap((file) => {
      const from = room(file)
      if (from === undefined) return []
      return edges
        .get(file)!
        .filter((target) => {
          const to = room(target)
          if (to === undefined) return false
          if (from === "protocol") return to !== "protocol"
          if (from === "wire") return to === "io"
          return false
        })
        .map((target) => `${file} -> ${target}`)
    })
    expect(crossing).toEqual([])
    expect(files.filter((f) => room(f) === "protocol").length).toBeGreaterThan(3)
    // The client's one way into schema is the protocol math.
    const clientReach = files
      .filter((file) => file.startsWith(`client${Path.sep}`))
      .flatMap((file) => edges.get(file)!.filter((target) => target.startsWith(`schema${Path.sep}`) && room(target) !== "protocol"))
    expect(clientReach).toEqual([])
  })

  it("keep http's rooms apart: core is its floor, read (the shared read model) stands on core, and the backend and the stream never reach into the indexer API", () => {
    const room = (file: string) => (file.startsWith(`http${Path.sep}`) ? file.split(Path.sep)[1] : undefined)
    const MAY: Record<string, ReadonlyArray<string>> = {
      core: ["core"],
      read: ["core", "read"],
      indexer: ["core", "read", "indexer"],
      backend: ["core", "read", "backend"],
      ws: ["core", "read", "backend", "ws"]
    }
    const crossing = files.flatMap((file) => {
      const from = room(file)
      if (from === undefined) return []
      return edges
        .get(file)!
        .filter((target) => {
          const to = room(target)
          return to !== undefined && !(MAY[from] ?? []).includes(to)
        })
        .map((target) => `${file} -> ${target}`)
    })
    expect(crossing).toEqual([])
    expect(Object.keys(MAY).sort(), "every room of http/ has its rule").toEqual(
      [...new Set(files.map(room).filter((r): r is string => r !== undefined && !r.endsWith(".ts")))].sort()
    )
  })

  it("form no cycles", () => {
    expect(cyclesOf(edges)).toEqual([])
  })

  it("the checks find what they look for", () => {
    // The walker sees real imports (this would pass vacuously if it saw none).
    expect(edges.get(Path.join("src", "app.ts"))!.length).toBeGreaterThan(5)
    expect(edges.get(Path.join("client", "index.ts"))!.length).toBeGreaterThan(1)
    expect(
      cyclesOf(
        new Map([
          ["a", ["b"]],
          ["b", ["c"]],
          ["c", ["a"]],
          ["d", ["a"]]
        ])
      )
    ).toEqual([["a", "b", "c"]])
  })
})

/**
 * Services are declared one way: a `Context.Tag` class whose key is `predix/<Name>`, each key once
 * (two tags with one key would be one service to Effect's context, silently).
 */
describe("services", () => {
  const declared = FLOORS.flatMap(sourceFiles).flatMap((file) =>
    [...fs.readFileSync(Path.join(ROOT, file), "utf8").matchAll(/Context\.(?:Tag|GenericTag)\w*\(\s*["']([^"']+)["']/g)].map((match) => ({
      file,
      key: match[1]!
    }))
  )

  it("have tag keys spelled predix/<Name>, each key once", () => {
    expect(declared.length, "the walker finds the tags").toBeGreaterThan(20)
    expect(declared.filter((tag) => !/^predix\/[A-Z][A-Za-z]+$/.test(tag.key))).toEqual([])
    const keys = declared.map((tag) => tag.key)
    expect(keys.filter((key, i) => keys.indexOf(key) !== i)).toEqual([])
  })
})
