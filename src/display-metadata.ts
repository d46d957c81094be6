/**
 * Display metadata of markets and events (slug, category, tags, featured, localized title, icon): not
 * on-chain, kept in `display_metadata` beside the index so the indexer API can show it and filter
 * on it. This module reads a metadata file (`fixtures/market-metadata.json` for the committed
 * fixture) and writes it.
 *
 * Invariants: seeding is an idempotent upsert in one transaction (running it twice leaves the
 * same rows; rows the file does not name are left alone); a file that does not match the schema
 * is refused as a whole, naming the offending entry, before anything is written.
 */
import { SqlClient } from "@effect/sql"
import { Data, Effect, ParseResult, Schema } from "effect"
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import { PROJECT_ROOT } from "../schema/io/project-root.js"

/** The metadata of the committed fixture's 28 markets and 2 events. */
export const FIXTURE_METADATA = Path.join(PROJECT_ROOT, "fixtures/market-metadata.json")

const Slug = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9]+(-[a-z0-9]+)*$/, { message: () => "expected lowercase letters and digits in hyphen-separated words" }),
  Schema.maxLength(64)
)

/** Title per locale (`en`, `vi`, `ja`, `ko`, ...); `en` is required and is the fallback. */
export const LocalizedTitle = Schema.Struct(
  { en: Schema.NonEmptyTrimmedString },
  Schema.Record({ key: Schema.String, value: Schema.String })
)

export const DisplayEntry = Schema.Struct({
  id: Schema.String.pipe(Schema.pattern(/^[1-9][0-9]{0,76}$/, { message: () => "expected a decimal id from 1" })),
  slug: Slug,
  category: Slug,
  featured: Schema.Boolean,
  title: LocalizedTitle,
  icon: Schema.NullOr(Schema.String.pipe(Schema.maxLength(2048))),
  /** Free tags beside the one category (GET /api/tags counts them); none when left out. */
  tags: Schema.optionalWith(Schema.Array(Slug).pipe(Schema.maxItems(20)), { default: () => [] })
})
export type DisplayEntry = typeof DisplayEntry.Type

export const DisplayMetadataFile = Schema.Struct({
  description: Schema.optional(Schema.String),
  markets: Schema.Array(DisplayEntry),
  events: Schema.Array(DisplayEntry)
})
export type DisplayMetadataFile = typeof DisplayMetadataFile.Type

export class DisplayMetadataError extends Data.TaggedError("DisplayMetadataError")<{ readonly message: string }> {}

/** Reads and checks a metadata file. */
export const loadDisplayMetadata = (path: string) =>
  Effect.tryPromise({
    try: async () => JSON.parse(await fs.readFile(path, "utf8")) as unknown,
    catch: (cause) => new DisplayMetadataError({ message: `cannot read display metadata ${path}: ${String(cause)}` })
  }).pipe(
    Effect.flatMap(Schema.decodeUnknown(DisplayMetadataFile)),
    Effect.mapError((error) =>
      ParseResult.isParseError(error)
        ? new DisplayMetadataError({
            message: `display metadata ${path} is malformed: ${ParseResult.TreeFormatter.formatErrorSync(error)}`
          })
        : error
    )
  )

/** Upserts every entry of `file` in one transaction; returns how many rows were written. */
export const seedDisplayMetadata = (file: DisplayMetadataFile) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const entries = [...file.markets.map((entry) => ["market", entry] as const), ...file.events.map((entry) => ["event", entry] as const)]
    yield* sql.withTransaction(
      Effect.forEach(
        entries,
        ([kind, e]) => sql`
          insert into display_metadata (kind, id, slug, category, featured, title, icon, tags)
          values (${kind}, ${e.id}::numeric, ${e.slug}, ${e.category}, ${e.featured}, ${JSON.stringify(e.title)}::jsonb, ${e.icon}, ${JSON.stringify(e.tags)}::jsonb)
          on conflict (kind, id) do update set
            slug = excluded.slug, category = excluded.category, featured = excluded.featured,
            title = excluded.title, icon = excluded.icon, tags = excluded.tags, updated_at = now()
          where (display_metadata.slug, display_metadata.category, display_metadata.featured, display_metadata.title, display_metadata.icon, display_metadata.tags)
            is distinct from (excluded.slug, excluded.category, excluded.featured, excluded.title, excluded.icon, excluded.tags)`,
        { discard: true }
      )
    )
    return entries.length
  })

/** Loads `path` and seeds it. */
export const seedDisplayMetadataFrom = (path: string = FIXTURE_METADATA) =>
  Effect.flatMap(loadDisplayMetadata(path), (file) =>
    Effect.tap(seedDisplayMetadata(file), (rows) =>
      Effect.logInfo("display metadata seeded").pipe(Effect.annotateLogs({ file: Path.relative(process.cwd(), path), rows }))
    )
  )
