/**
 * Every market's slug: its display metadata's when it has one, else one derived from its question
 * and id (markets the live activity launches, or any chain's markets nobody described).
 *
 * Invariants of the derived slug:
 * - deterministic: a function of the question and the id alone, both fixed when the market is
 *   created, so it is the same on every read and after any re-index;
 * - unique among derived slugs: it always ends in `-<id>` (uniqueness needs no other row, so no
 *   read order or index history can change which market gets which slug);
 * - a metadata slug is looked up first, so a derived slug never shadows a described market;
 * - the display metadata's alphabet (lowercase letters and digits in hyphen-separated words), the
 *   question part cut at a word boundary to keep the whole within 64 characters for ids up to 15 digits.
 */

const MAX = 64

/** The question as slug words: accents dropped, lowercase, anything else a single hyphen. */
const words = (question: string) =>
  question
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")

/** The slug derived from `question` for market `id`. */
export const derivedMarketSlug = (question: string, id: bigint): string => {
  const suffix = `-${id}`
  const room = Math.max(0, MAX - suffix.length)
  let stem = words(question)
  if (stem.length > room) {
    const cut = stem.slice(0, room + 1)
    const boundary = cut.lastIndexOf("-")
    stem = boundary > 0 ? cut.slice(0, boundary) : stem.slice(0, room)
  }
  return `${stem === "" ? "market" : stem}${suffix}`
}

/** The market id a derived slug ends with, or undefined for a slug that cannot be one. */
export const derivedSlugId = (slug: string): bigint | undefined => {
  const match = /-([1-9][0-9]{0,76})$/.exec(slug)
  return match === null ? undefined : BigInt(match[1]!)
}

/** A market's slug: its metadata's, else the derived one. */
export const marketSlug = (market: {
  readonly id: bigint
  readonly question: string
  readonly metadata: { readonly slug: string } | null
}) => market.metadata?.slug ?? derivedMarketSlug(market.question, market.id)
