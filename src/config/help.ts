/**
 * The settings as people read them: the `--help` description list and docs/settings.md's
 * Configuration table, both printed from the one list in settings.ts.
 */
import { HelpDoc, Span } from "@effect/cli"
import type { Setting } from "./setting.js"
import { settings } from "./settings.js"

/** The default as `--help` says it: the text, or `(unset: what that means)`. */
const helpDefault = (setting: Setting<unknown>): string =>
  setting.fallback._tag === "Text" ? setting.fallback.text : `(unset: ${setting.fallback.means})`

/** A description for the terminal: the Markdown backticks dropped. */
const plain = (text: string): string => text.replaceAll("`", "")

/** `--help`'s list of variables: name, then description and default. */
export const settingsHelpDoc = (): HelpDoc.HelpDoc =>
  HelpDoc.descriptionList(
    settings.map(
      (s) => [Span.text(s.name), HelpDoc.p(`${plain(s.description)}. Default: ${helpDefault(s)}`)] as [Span.Span, HelpDoc.HelpDoc]
    ) as [[Span.Span, HelpDoc.HelpDoc], ...Array<[Span.Span, HelpDoc.HelpDoc]>]
  )

/** The table of docs/settings.md (Markdown), one row per variable. */
export const settingsTable = (): string =>
  [
    "| Variable | Default | Meaning |",
    "|---|---|---|",
    ...settings.map(
      (s) =>
        `| \`${s.name}\` | ${s.fallback._tag === "Text" ? `\`${s.fallback.text}\`` : `unset: ${s.fallback.means}`} | ${s.description} |`
    )
  ].join("\n")
