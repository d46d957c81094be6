/**
 * What a fresh live devnet opens so that it looks like the beta (`beta.ts` launches it): binary
 * markets across categories, each with its display metadata, one multi-outcome event, and three
 * short markets that change state within minutes of the start (two resolve, one refunds).
 *
 * Invariants: questions are unique (a restart finds each market again by its question in the
 * MarketCreated logs after the committed state); slugs are unique and are lowercase words joined
 * by hyphens (`display_metadata`'s rule); at least 12 markets stay open for weeks, in at least 5
 * categories (test/devnet/live-start.test.ts checks it through the APIs).
 */

/** How a market's life goes on the devnet. */
export type BetaFate =
  /** Open for `days`, traded by the background activity. */
  | { readonly kind: "open"; readonly days: number }
  /** Ends after `seconds`; then the manual oracle's reporter reports YES and finalizes after the challenge window. */
  | { readonly kind: "manual-yes"; readonly seconds: number }
  /** Ends after `seconds`; the price-feed oracle resolves it at its snapshot (the end): YES when the feed is >= `threshold` (8 decimals). */
  | { readonly kind: "feed"; readonly seconds: number; readonly threshold: bigint }
  /** Ends after `seconds`; then the admin puts it in refund mode (the match was called off). */
  | { readonly kind: "refund"; readonly seconds: number }

export interface BetaDisplay {
  readonly slug: string
  readonly category: string
  readonly tags: ReadonlyArray<string>
  readonly icon: string
  readonly title: string
  readonly featured: boolean
}

export interface BetaMarketSpec extends BetaDisplay {
  readonly question: string
  readonly fate: BetaFate
}

export interface BetaEventSpec extends BetaDisplay {
  readonly name: string
  readonly days: number
  readonly outcomes: ReadonlyArray<{ readonly question: string; readonly title: string; readonly slug: string; readonly icon: string }>
}

const DAY = 1

const open = (
  question: string,
  slug: string,
  category: string,
  tags: ReadonlyArray<string>,
  icon: string,
  days: number,
  featured = false
): BetaMarketSpec => ({ question, slug, category, tags, icon, title: question, featured, fate: { kind: "open", days } })

export const BETA_MARKETS: ReadonlyArray<BetaMarketSpec> = [
  open(
    "Will ETH trade above $5,000 this quarter?",
    "eth-above-5000-this-quarter",
    "crypto",
    ["eth", "price"],
    "icons/eth.svg",
    60 * DAY,
    true
  ),
  open(
    "Will BTC set a new all-time high this month?",
    "btc-new-all-time-high-this-month",
    "crypto",
    ["btc", "price"],
    "icons/btc.svg",
    30 * DAY,
    true
  ),
  open(
    "Will USDC supply exceed 100B this quarter?",
    "usdc-supply-above-100b",
    "crypto",
    ["usdc", "stablecoins"],
    "icons/usdc.svg",
    60 * DAY
  ),
  open(
    "Will the Fed cut rates at its next meeting?",
    "fed-cut-next-meeting",
    "economics",
    ["fed", "rates"],
    "icons/fed.svg",
    45 * DAY,
    true
  ),
  open(
    "Will US inflation print below 2.5% next month?",
    "us-inflation-below-2-5-next-month",
    "economics",
    ["inflation"],
    "icons/inflation.svg",
    35 * DAY
  ),
  open(
    "Will Brazil reach the World Cup semifinal?",
    "brazil-world-cup-semifinal",
    "sports",
    ["football", "world-cup"],
    "icons/football.svg",
    90 * DAY
  ),
  open(
    "Will the Lakers make the playoffs this season?",
    "lakers-make-playoffs",
    "sports",
    ["basketball", "nba"],
    "icons/basketball.svg",
    90 * DAY
  ),
  open(
    "Will the G20 summit agree a joint climate statement?",
    "g20-joint-climate-statement",
    "politics",
    ["g20", "climate"],
    "icons/globe.svg",
    40 * DAY
  ),
  open("Will the UN choose a new Secretary-General this year?", "un-new-secretary-general", "politics", ["un"], "icons/city.svg", 60 * DAY),
  open(
    "Will Apple ship a foldable iPhone this year?",
    "apple-foldable-iphone-this-year",
    "technology",
    ["apple", "hardware"],
    "icons/phone.svg",
    60 * DAY
  ),
  open(
    "Will Starship reach orbit on its next flight?",
    "starship-orbit-next-flight",
    "science",
    ["spacex", "space"],
    "icons/rocket.svg",
    30 * DAY,
    true
  ),
  open(
    "Will gold close above $4,000 this month?",
    "gold-above-4000-this-month",
    "finance",
    ["gold", "commodities"],
    "icons/gold.svg",
    30 * DAY
  ),
  open("Will London see a white Christmas?", "london-white-christmas", "weather", ["snow"], "icons/snow.svg", 30 * DAY),
  {
    question: "Will the devnet's reporter call YES two minutes after the start?",
    slug: "devnet-reporter-calls-yes",
    category: "crypto",
    tags: ["live", "oracle"],
    icon: "icons/clock.svg",
    title: "Will the devnet's reporter call YES two minutes after the start?",
    featured: false,
    fate: { kind: "manual-yes", seconds: 120 }
  },
  {
    question: "Will ETH be above $3,000 at the 3-minute snapshot?",
    slug: "eth-above-3000-3-minute-snapshot",
    category: "crypto",
    tags: ["eth", "price", "live"],
    icon: "icons/eth.svg",
    title: "Will ETH be above $3,000 at the 3-minute snapshot?",
    featured: false,
    fate: { kind: "feed", seconds: 180, threshold: 3_000n * 10n ** 8n }
  },
  {
    question: "Will the exhibition match kick off on time?",
    slug: "exhibition-match-kicks-off-on-time",
    category: "sports",
    tags: ["football", "live"],
    icon: "icons/clock.svg",
    title: "Will the exhibition match kick off on time?",
    featured: false,
    fate: { kind: "refund", seconds: 240 }
  }
]

/** The open multi-outcome event (its members trade like binary markets; resolved through the event). */
export const BETA_EVENT: BetaEventSpec = {
  name: "Who wins the Devnet Cup?",
  slug: "devnet-cup-winner",
  category: "sports",
  tags: ["football", "devnet-cup"],
  icon: "icons/trophy.svg",
  title: "Who wins the Devnet Cup?",
  featured: true,
  days: 30 * DAY,
  outcomes: [
    { question: "Devnet Cup: Falcons", title: "Falcons", slug: "devnet-cup-falcons", icon: "icons/falcons.svg" },
    { question: "Devnet Cup: Tigers", title: "Tigers", slug: "devnet-cup-tigers", icon: "icons/tigers.svg" },
    { question: "Devnet Cup: Wolves", title: "Wolves", slug: "devnet-cup-wolves", icon: "icons/wolves.svg" },
    { question: "Devnet Cup: Sharks", title: "Sharks", slug: "devnet-cup-sharks", icon: "icons/sharks.svg" }
  ]
}
