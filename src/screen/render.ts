/**
 * The start screen's text, as pure functions of what it knows: the banner (URLs, chain id), the
 * devnet's accounts, the backfill progress bar, the tip status line and readable log lines.
 * Nothing here writes; `terminal.ts` does.
 *
 * Invariant: a URL that came from the configuration (RPC_URL, BUNDLER_URL) is shown through
 * `displayUrl` (config/readers.ts): scheme, host and port only, since a provider's API key often sits in the path or
 * the query, and a password in the user info.
 */
import type { LogRecord } from "./log-record.js"

export { displayUrl } from "../config/readers.js"

/** ANSI styling; `plain` when NO_COLOR is set (the text stays the same, only the escapes go). */
export interface Style {
  readonly bold: (s: string) => string
  readonly dim: (s: string) => string
  readonly color: (code: number, s: string) => string
}

export const ansiStyle: Style = {
  bold: (s) => `\x1b[1m${s}\x1b[22m`,
  dim: (s) => `\x1b[2m${s}\x1b[22m`,
  color: (code, s) => `\x1b[${code}m${s}\x1b[39m`
}

export const plainStyle: Style = { bold: (s) => s, dim: (s) => s, color: (_, s) => s }

/** The text a terminal shows for `s`: escapes removed (for widths). */
export const visible = (s: string): string => s.replace(/\x1b\[[0-9;]*m/g, "")

/** One funded devnet account, its key, and what the service or the background activity uses it for. */
export interface DevAccount {
  readonly index: number
  readonly address: string
  readonly privateKey: string
  readonly role: string
}

/** What the banner shows; an undefined URL is one not known (yet). */
export interface BannerInfo {
  readonly chainId: number
  /** What is indexed: "live devnet", "committed fixture (replayed)", "RPC_URL", ... */
  readonly chain: string
  readonly indexerUrl: string | undefined
  readonly backendUrl: string | undefined
  readonly rpc: string
  readonly bundler: string
}

const row = (style: Style, label: string, value: string, note?: string) =>
  `  ${style.bold(label.padEnd(12))}${value}${note === undefined ? "" : `   ${style.dim(note)}`}`

export const bannerLines = (info: BannerInfo, style: Style): ReadonlyArray<string> => {
  const lines = [
    "",
    `  ${style.bold(style.color(36, "predix"))} ${style.dim("·")} chain ${info.chainId} ${style.dim("·")} ${info.chain}`,
    ""
  ]
  if (info.indexerUrl !== undefined) {
    lines.push(row(style, "Indexer API", info.indexerUrl, `OpenAPI ${info.indexerUrl}/api/openapi.json`))
    lines.push(row(style, "Docs", `${info.indexerUrl}/api/docs`))
  }
  if (info.backendUrl !== undefined) {
    lines.push(row(style, "Backend API", info.backendUrl, `OpenAPI ${info.backendUrl}/api/openapi.json`))
    lines.push(row(style, "WebSocket", `${info.backendUrl.replace(/^http/, "ws")}/ws/realtime`))
  }
  lines.push(row(style, "RPC", info.rpc))
  lines.push(row(style, "Bundler", info.bundler))
  lines.push(row(style, "Chain id", String(info.chainId)))
  lines.push("")
  return lines
}

/** The devnet's accounts, anvil's way: address and key on one line each, with the mnemonic they come from. */
export const accountLines = (mnemonic: string, accounts: ReadonlyArray<DevAccount>, more: string, style: Style): ReadonlyArray<string> => [
  `  ${style.bold("Accounts")}    ${style.dim(`10,000 ETH each at genesis; mnemonic "${mnemonic}"`)}`,
  ...accounts.map(
    (a) => `  ${style.dim(`(${a.index})`.padStart(4))} ${a.address}  ${style.dim("key")} ${a.privateKey}  ${style.dim(a.role)}`
  ),
  `  ${style.dim(more)}`,
  ""
]

const grouped = (n: number) => Math.round(n).toLocaleString("en-US")

/** `75s` as `1m 15s`. */
export const duration = (seconds: number): string => {
  const s = Math.max(0, Math.round(seconds))
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`
}

/** A backfill's position, from the indexer's `indexed` lines (pipeline/backfill-writer.ts). */
export interface Backfill {
  readonly from: number
  readonly block: number
  readonly target: number
  /** Events committed so far in this backfill. */
  readonly events: number
  readonly eventsPerSecond: number
  readonly etaSeconds: number
  readonly elapsedSeconds: number
}

/** `Backfill [█████░░░░░] 612/1,042 blocks  58%  1,234 events/s  ETA 4s`, cut to `width` columns. */
export const progressLine = (p: Backfill, width: number, style: Style): string => {
  const total = Math.max(p.target - p.from + 1, 1)
  const done = Math.min(Math.max(p.block - p.from + 1, 0), total)
  const fraction = done / total
  const barWidth = 24
  const filled = Math.round(fraction * barWidth)
  const bar = style.color(32, "█".repeat(filled)) + style.dim("░".repeat(barWidth - filled))
  const text = `${style.bold("Backfill")} ${bar} ${grouped(done)}/${grouped(total)} blocks  ${Math.floor(fraction * 100)}%  ${grouped(p.eventsPerSecond)} events/s  ETA ${duration(p.etaSeconds)}`
  return fit(text, width)
}

/** The line left once a backfill reached its target. */
export const backfillDoneLine = (p: Backfill, style: Style): string =>
  `${style.color(32, "✔")} backfill done: blocks ${p.from}-${p.target} (${grouped(p.target - p.from + 1)}), ${grouped(p.events)} events in ${duration(p.elapsedSeconds)}, ${grouped(p.eventsPerSecond)} events/s`

export interface Tip {
  readonly block: number
  readonly head: number
  readonly finalized: number
  readonly reorgs: number
}

export const tipLine = (t: Tip, width: number, style: Style): string =>
  fit(
    `${style.bold("Following the tip")}  block ${t.block}  ${style.dim("·")}  head ${t.head}  ${style.dim("·")}  finalized ${t.finalized}  ${style.dim("·")}  ${t.reorgs} reorgs`,
    width
  )

const levelColor: Record<string, number> = { TRACE: 90, DEBUG: 90, INFO: 34, WARN: 33, ERROR: 31, FATAL: 31 }

const quoted = (value: string) => (/^[^\s"=]+$/.test(value) ? value : JSON.stringify(value))

/** `15:20:13 INFO  message  key=value ...`: logfmt's content, for a person. */
export const logLine = (r: LogRecord, style: Style): string => {
  const time = new Date(r.time).toISOString().slice(11, 19)
  const fields = Object.entries(r.fields).map(([k, v]) => `${style.dim(`${k}=`)}${quoted(v)}`)
  const text = [style.dim(time), style.color(levelColor[r.level] ?? 39, r.level.padEnd(5)), r.message, ...fields].join(" ")
  return r.cause === undefined ? text : `${text}\n${style.dim(r.cause)}`
}

/** `s` cut to `width` visible columns (a status line must never wrap: it is redrawn in place). */
const fit = (s: string, width: number): string => {
  if (visible(s).length <= width) return s
  let out = ""
  let shown = 0
  for (const part of s.split(/(\x1b\[[0-9;]*m)/)) {
    if (part.startsWith("\x1b[")) out += part
    else {
      const room = width - 1 - shown
      if (room <= 0) continue
      out += part.slice(0, room)
      shown += Math.min(part.length, room)
    }
  }
  return s.includes("\x1b[") ? `${out}…\x1b[0m` : `${out}…`
}
