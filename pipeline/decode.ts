/**
 * Log decoding on the hot path: route by emitting address to contract kinds, then by topic0 and
 * topic count to a catalog entry, then read the arguments at fixed word offsets.
 *
 * Why not viem's `decodeEventLog` for every log: it checksums every address (a keccak each),
 * which caps it near 16k logs/s here. Each catalog entry is compiled once into a reader that
 * slices the topics and the data words directly and keeps addresses lowercase; only events with
 * a dynamic non-indexed parameter (a string, an array, a tuple: MarketCreated, EventCreated,
 * DiamondCut) decode their data through viem. Values have viem's types (numbers up to 48 bits,
 * bigints above), so the catalog's `toDomain` takes them unchanged.
 *
 * A log that no entry of its address's kinds knows is not an error: `decodeLog` returns
 * undefined and the caller counts it.
 */
import { decodeAbiParameters, type AbiParameter, type Hex } from "viem"
import { CATALOG, COMPONENT_KINDS, type CatalogEntry, type ContractKind } from "../schema/catalog.js"
import { COMPONENTS } from "../schema/components.js"
import type { Deployment } from "../schema/deployment.js"
import type { DomainEvent } from "../schema/domain-events.js"
import type { ProtocolContracts } from "./reduce/model.js"

/** What decoding reads of a log; the emitting address has already chosen the kinds. */
export interface LogBody {
  readonly topics: ReadonlyArray<string>
  readonly data: string
}

type Reader = (topics: ReadonlyArray<string>, data: string) => Record<string, unknown>

const TWO_256 = 1n << 256n

const isStaticType = (type: string) =>
  type === "address" || type === "bool" || /^u?int\d*$/.test(type) || /^bytes([1-9]|[12]\d|3[0-2])$/.test(type)

/** Reads one 32-byte word (64 hex chars, no 0x) as viem would decode `type`. */
const wordReader = (type: string): ((word: string) => unknown) => {
  if (type === "address") return (w) => `0x${w.slice(24)}`.toLowerCase()
  if (type === "bool") return (w) => /[1-9a-f]/i.test(w)
  const bytes = /^bytes(\d+)$/.exec(type)
  if (bytes !== null) {
    const length = Number(bytes[1]) * 2
    return (w) => `0x${w.slice(0, length)}`.toLowerCase()
  }
  const int = /^(u?)int(\d*)$/.exec(type)
  if (int !== null) {
    const signed = int[1] === ""
    const bits = int[2] === "" ? 256 : Number(int[2])
    const small = bits <= 48
    if (!signed) return small ? (w) => Number.parseInt(w.slice(64 - bits / 4), 16) : (w) => BigInt(`0x${w}`)
    const half = 1n << 255n
    return (w) => {
      let v = BigInt(`0x${w}`)
      if (v >= half) v -= TWO_256
      return small ? Number(v) : v
    }
  }
  throw new Error(`not a static type: ${type}`)
}

const strip = (hex: string) => (hex.startsWith("0x") ? hex.slice(2) : hex)

/** Compiles the reader of one entry: fixed offsets for static data, viem for dynamic data. */
const compile = (entry: CatalogEntry): Reader => {
  const inputs = entry.abi.inputs
  const indexed = inputs
    .map((input, i) => ({ input, i }))
    .filter(({ input }) => input.indexed === true)
    // An indexed dynamic value is only its hash on-chain: it stays the topic.
    .map(({ input }, position) => ({
      name: input.name ?? "",
      topic: position + 1,
      read: isStaticType(input.type) ? wordReader(input.type) : (w: string) => `0x${w}`
    }))
  const plain = inputs.filter((input) => input.indexed !== true)
  const allStatic = plain.every((input) => isStaticType(input.type))
  const fields = plain.map((input, word) => ({ name: input.name ?? "", word, read: allStatic ? wordReader(input.type) : undefined }))
  const words = plain.length
  return (topics, data) => {
    const args: Record<string, unknown> = {}
    for (const f of indexed) {
      const topic = topics[f.topic]
      if (topic === undefined) throw new Error(`${entry.signature}: missing topic ${f.topic}`)
      args[f.name] = f.read(strip(topic))
    }
    if (words === 0) return args
    const body = strip(data)
    if (allStatic) {
      if (body.length < words * 64) throw new Error(`${entry.signature}: data holds ${body.length / 2} bytes, needs ${words * 32}`)
      for (const f of fields) args[f.name] = f.read!(body.slice(f.word * 64, f.word * 64 + 64))
      return args
    }
    const values = decodeAbiParameters(plain as ReadonlyArray<AbiParameter>, `0x${body}` as Hex)
    // Addresses come back checksummed here; the entry's toDomain lowercases them.
    plain.forEach((input, i) => {
      args[input.name ?? ""] = values[i]
    })
    return args
  }
}

interface Compiled {
  readonly entry: CatalogEntry
  readonly read: Reader
}

/**
 * Every entry compiled once, by kind, then topic0, then topic count. Looked up by the log's own
 * topic0 string rather than a composed key: no string is built per log, and a topic0 string
 * shared by consecutive logs (logs-answer.ts) keeps its computed hash.
 */
const ROUTES: ReadonlyMap<ContractKind, ReadonlyMap<string, ReadonlyArray<Compiled | undefined>>> = (() => {
  const routes = new Map<ContractKind, Map<string, Array<Compiled | undefined>>>()
  for (const entry of CATALOG) {
    let byTopic = routes.get(entry.contract)
    if (byTopic === undefined) routes.set(entry.contract, (byTopic = new Map()))
    let byCount = byTopic.get(entry.topic0)
    if (byCount === undefined) byTopic.set(entry.topic0, (byCount = []))
    byCount[1 + entry.indexedCount] = { entry, read: compile(entry) }
  }
  return routes
})()

export interface DecodedLog {
  readonly entry: CatalogEntry
  readonly event: DomainEvent
}

/**
 * Which contract kinds each watched address emits. Starts from the deployment; outcome tokens
 * join as MarketCreated events announce them (`watchToken`).
 */
export class AddressBook {
  private readonly kinds = new Map<string, ReadonlyArray<ContractKind>>()
  /** The addresses in the order first watched: the deployment's, then the tokens (it only grows at the end). */
  private readonly list: Array<string> = []
  private readonly components: number

  constructor(deployment: Deployment) {
    for (const component of COMPONENTS) {
      const kinds = COMPONENT_KINDS[component]
      if (kinds === undefined) continue
      const address = deployment[component].toLowerCase()
      if (!this.kinds.has(address)) this.list.push(address)
      this.kinds.set(address, kinds)
    }
    this.components = this.list.length
  }

  /** Watches an outcome token; an address already watched keeps what it is. */
  watchToken(address: string): void {
    const a = address.toLowerCase()
    if (this.kinds.has(a)) return
    this.kinds.set(a, ["outcomeToken"])
    this.list.push(a)
  }

  /** Whether a lowercase address is watched (a component with events, or an outcome token). */
  watches(address: string): boolean {
    return this.kinds.has(address)
  }

  kindsOf(address: string): ReadonlyArray<ContractKind> | undefined {
    return this.kinds.get(address.toLowerCase())
  }

  /** Every watched address, in the order first watched: live, it grows as tokens are watched. */
  get addresses(): ReadonlyArray<string> {
    return this.list
  }

  /** The outcome tokens watched (the addresses beyond the deployment's). */
  get tokens(): ReadonlyArray<string> {
    return this.list.slice(this.components)
  }
}

/**
 * The protocol's own contracts (never users): every component of the deployment and every
 * outcome token the book watches (it grows as markets are created, so this is live).
 */
export const protocolContracts = (deployment: Deployment, book: AddressBook): ProtocolContracts => {
  const components = new Set<string>(COMPONENTS.map((c) => deployment[c].toLowerCase()))
  const router = deployment.router.toLowerCase()
  const exchange = deployment.exchange.toLowerCase()
  return {
    has: (address) => components.has(address) || book.watches(address),
    isVenue: (address) => address === router || address === exchange
  }
}

/**
 * Decodes one log of a watched address; undefined when no catalog entry of its kinds matches.
 * Throws only when a matching entry's layout does not fit the log (a malformed log).
 */
export const decodeLog = (kinds: ReadonlyArray<ContractKind>, log: LogBody): DecodedLog | undefined => {
  const topic0 = log.topics[0]
  if (topic0 === undefined) return undefined
  const topic = topic0.toLowerCase()
  for (const kind of kinds) {
    const compiled = ROUTES.get(kind)?.get(topic)?.[log.topics.length]
    if (compiled !== undefined) {
      return { entry: compiled.entry, event: compiled.entry.toDomain(compiled.read(log.topics, log.data)) }
    }
  }
  return undefined
}

const MARKET_CREATED_TOPIC = CATALOG.find((e) => e.contract === "marketFacet" && e.name === "MarketCreated" && e.variant === "spec")!.topic0

/**
 * The contracts a log announces, to be watched from its block on: the YES and NO tokens of a
 * MarketCreated (its first two data words). Read without a full decode: the recorder and the
 * backfill call it on every log.
 */
export const announcedTokens = (log: LogBody): ReadonlyArray<string> =>
  log.topics[0]?.toLowerCase() === MARKET_CREATED_TOPIC && log.data.length >= 2 + 128
    ? [`0x${log.data.slice(2 + 24, 2 + 64)}`.toLowerCase(), `0x${log.data.slice(2 + 64 + 24, 2 + 128)}`.toLowerCase()]
    : []
