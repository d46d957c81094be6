/**
 * A terminal with one status line pinned below the scrolling output, as progress bars do: lines
 * scroll above it, and the status line is redrawn in place (carriage return, erase line).
 *
 * Invariants: the status line is cut to the terminal's width by its renderer, so it never wraps
 * (a wrapped line could not be erased in place); `close` erases it and leaves the cursor at the
 * start of an empty line, so whatever prints after the screen (an error on exit) starts clean.
 */

export interface TerminalOut {
  readonly write: (text: string) => unknown
  readonly columns?: number | undefined
}

const ERASE_LINE = "\r\x1b[2K"

export class PinnedTerminal {
  private status = ""

  constructor(private readonly out: TerminalOut) {}

  /** Columns available to the status line; 100 when the terminal does not say (a pseudo-terminal of size 0). */
  get width(): number {
    const columns = this.out.columns ?? 0
    return columns > 0 ? columns : 100
  }

  /** Prints `lines` above the status line. */
  print(lines: ReadonlyArray<string>): void {
    if (lines.length === 0) return
    this.out.write(`${ERASE_LINE}${lines.join("\n")}\n${this.status}`)
  }

  /** Replaces the status line (empty: none). */
  setStatus(status: string): void {
    if (status === this.status) return
    this.status = status
    this.out.write(`${ERASE_LINE}${status}`)
  }

  /** Erases the status line; the screen is done. */
  close(): void {
    if (this.status !== "") this.out.write(ERASE_LINE)
    this.status = ""
  }
}
