/**
 * The start screen: what `start` shows on a terminal instead of logfmt. It is a view of the log
 * records (this process's, and the indexer child's forwarded over IPC): the `listening` lines
 * give the banner its URLs, the indexer's `indexed` lines the progress bar, `following the tip`
 * the status line; every other record is printed as a readable line.
 *
 * Invariants:
 * - the records it reads are the logfmt lines' stable messages and keys (`listening` server/url,
 *   `indexed` from/block/target/events/events_per_s/eta_s/elapsed_s, `following the tip`
 *   block/head/finalized/reorgs, `devnet: alto bundler` bundler_url); test/screen/ checks them;
 * - private keys are shown only through `showDevnet` (the live devnet's public test keys);
 * - nothing is lost: a record it does not draw is printed.
 */
import type { LogRecord } from "./log-record.js"
import {
  accountLines,
  type Backfill,
  backfillDoneLine,
  type BannerInfo,
  bannerLines,
  type DevAccount,
  logLine,
  progressLine,
  type Style,
  type Tip,
  tipLine
} from "./render.js"
import type { PinnedTerminal } from "./terminal.js"

/** What the screen knows before any record: from the configuration and the role `start` runs. */
export interface ScreenSetup {
  readonly chainId: number
  readonly chain: string
  readonly rpc: string
  readonly bundler: string
  /** The servers this process runs, whose URLs the banner waits for. */
  readonly servers: { readonly indexer: boolean; readonly backend: boolean }
}

const number = (fields: Readonly<Record<string, string>>, key: string): number | undefined => {
  const value = fields[key]
  if (value === undefined || !/^-?\d+(\.\d+)?$/.test(value)) return undefined
  return Number(value)
}

/** The backfill an `indexed` record describes, when it carries every figure the bar needs. */
const backfillOf = (r: LogRecord, before: Backfill | undefined): Backfill | undefined => {
  const [from, block, target, events, eventsPerSecond, etaSeconds, elapsedSeconds] = [
    "from",
    "block",
    "target",
    "events",
    "events_per_s",
    "eta_s",
    "elapsed_s"
  ].map((key) => number(r.fields, key))
  if (from === undefined || block === undefined || target === undefined || events === undefined) return undefined
  // `events` is the batch's; a new backfill (another `from` or `target`) starts the count again.
  const same = before !== undefined && before.from === from && before.target === target
  return {
    from,
    block,
    target,
    events: (same ? before.events : 0) + events,
    eventsPerSecond: eventsPerSecond ?? 0,
    etaSeconds: etaSeconds ?? 0,
    elapsedSeconds: elapsedSeconds ?? 0
  }
}

const tipOf = (r: LogRecord): Tip | undefined => {
  const [block, head, finalized, reorgs] = ["block", "head", "finalized", "reorgs"].map((key) => number(r.fields, key))
  return block === undefined || head === undefined || finalized === undefined ? undefined : { block, head, finalized, reorgs: reorgs ?? 0 }
}

export class StartScreen {
  private indexerUrl: string | undefined
  private backendUrl: string | undefined
  private rpc: string
  private bundler: string
  private devnet: { readonly mnemonic: string; readonly accounts: ReadonlyArray<DevAccount>; readonly more: string } | undefined
  private bannerShown = false
  private accountsShown = false
  private backfill: Backfill | undefined
  private tip: Tip | undefined

  constructor(
    private readonly setup: ScreenSetup,
    private readonly terminal: PinnedTerminal,
    private readonly style: Style
  ) {
    this.rpc = setup.rpc
    this.bundler = setup.bundler
  }

  /** One log record: drawn into the banner or the status line, or printed. */
  log(r: LogRecord): void {
    if (r.message === "listening" && (r.fields.server === "indexer" || r.fields.server === "backend") && r.fields.url !== undefined) {
      if (r.fields.server === "indexer") this.indexerUrl = r.fields.url
      else this.backendUrl = r.fields.url
      return this.showBanner()
    }
    if (r.message === "indexed") {
      const backfill = backfillOf(r, this.backfill)
      if (backfill !== undefined) {
        this.backfill = backfill
        this.showBanner()
        if (backfill.block >= backfill.target) {
          this.terminal.print([backfillDoneLine(backfill, this.style)])
          this.backfill = undefined
        }
        return this.drawStatus()
      }
    }
    if (r.message === "following the tip") {
      const tip = tipOf(r)
      if (tip !== undefined) {
        this.tip = tip
        this.showBanner()
        return this.drawStatus()
      }
    }
    if (r.message === "devnet: alto bundler" && r.fields.bundler_url !== undefined) this.bundler = r.fields.bundler_url
    this.terminal.print([logLine(r, this.style)])
    // A process with no server of its own (`--only indexer`) has its banner once it says anything.
    if (!this.setup.servers.indexer && !this.setup.servers.backend) this.showBanner()
  }

  /**
   * The live devnet this process runs: its RPC URL and its funded accounts with their keys (the
   * public test mnemonic's). Called only where the live devnet is started (see the header).
   */
  showDevnet(rpcUrl: string, mnemonic: string, accounts: ReadonlyArray<DevAccount>, more: string): void {
    this.rpc = rpcUrl
    this.devnet = { mnemonic, accounts, more }
    // Already past the banner (`--only indexer` starts its devnet late): the accounts come now.
    if (this.bannerShown) this.showAccounts()
  }

  /** Erases the status line: the run is over. */
  close(): void {
    this.terminal.close()
  }

  private showBanner(): void {
    if (this.bannerShown) return
    if ((this.setup.servers.indexer && this.indexerUrl === undefined) || (this.setup.servers.backend && this.backendUrl === undefined))
      return
    const info: BannerInfo = {
      chainId: this.setup.chainId,
      chain: this.setup.chain,
      indexerUrl: this.indexerUrl,
      backendUrl: this.backendUrl,
      rpc: this.rpc,
      bundler: this.bundler
    }
    this.bannerShown = true
    this.terminal.print(bannerLines(info, this.style))
    this.showAccounts()
  }

  private showAccounts(): void {
    if (this.accountsShown || this.devnet === undefined) return
    this.accountsShown = true
    this.terminal.print(accountLines(this.devnet.mnemonic, this.devnet.accounts, this.devnet.more, this.style))
  }

  private drawStatus(): void {
    const width = this.terminal.width
    this.terminal.setStatus(
      this.backfill !== undefined
        ? progressLine(this.backfill, width, this.style)
        : this.tip !== undefined
          ? tipLine(this.tip, width, this.style)
          : ""
    )
  }
}
