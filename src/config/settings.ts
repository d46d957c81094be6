/**
 * Every environment variable this program reads, declared once: name, reader, default and
 * description. The tree's shape is the configuration's (`AppConfigShape` in ../config.ts), and its
 * order is the order `--help` and docs/settings.md's table list the variables in.
 *
 * To add a variable: add it here (and to `AppConfigShape`); `tsc` checks the two agree, and
 * test/config/settings.test.ts that docs/settings.md's table is the one `settingsTable()` prints.
 */
import { Option, Redacted } from "effect"
import { noProxy } from "../../http/backend/edge/client-ip.js"
import * as read from "./readers.js"
import { listOf, optional, withDefault } from "./setting.js"

const port = read.boundedInteger(0, 65535, "a TCP port")
const requests = read.boundedInteger(0, 1_000_000_000, "a request count")
const blocks = read.boundedInteger(0, 1_000_000_000, "a number of blocks")

export const settingTree = {
  databaseUrl: optional(
    "DATABASE_URL",
    read.secretUrl(["postgres", "postgresql"]),
    "embedded Postgres under DATA_DIR",
    "Postgres connection URL (`postgres://user:pass@host:port/db`); unset starts an embedded Postgres"
  ),
  databaseReadUrls: optional(
    "DATABASE_READ_URL",
    read.commaList(read.urlWithSchemes(["postgres", "postgresql"])),
    "API reads go to the primary",
    "Comma-separated Postgres URLs of streaming read replicas of DATABASE_URL: API processes (`--only api`, the API side of `start`) read the index there; writes stay on the primary"
  ).map(Option.match({ onNone: (): ReadonlyArray<Redacted.Redacted<string>> => [], onSome: (urls) => urls.map(Redacted.make) })),
  readMaxLagBlocks: withDefault(
    "DATABASE_READ_MAX_LAG_BLOCKS",
    blocks,
    "20",
    "Blocks a read replica's index may trail the primary's before it leaves the rotation (reads go to the other replicas, else the primary; /health lists it)"
  ),
  dataDir: withDefault(
    "DATA_DIR",
    read.path,
    ".data",
    "Directory for local state: the embedded cluster (`postgres/cluster`) and `postgres/connection.json` with its URL"
  ),
  pgPort: withDefault(
    "PG_PORT",
    port,
    "54329",
    "Loopback port of the embedded Postgres (`0` = any free port); ignored when DATABASE_URL is set"
  ),
  rpcUrl: optional(
    "RPC_URL",
    read.urlWithSchemes(["http", "https", "ws", "wss"]),
    "CHAIN says what to index",
    "JSON-RPC endpoint of the chain to index (http, https, ws or wss); also the default of `record --rpc`"
  ),
  deploymentPath: optional(
    "DEPLOYMENT",
    read.path,
    "none; checked at start when set",
    "Path to the deployment file: JSON with every contract address of the spec plus `deployBlock` (and optionally `chainId`)"
  ),
  chainId: withDefault(
    "CHAIN_ID",
    read.boundedInteger(1, Number.MAX_SAFE_INTEGER, "a positive integer chain id"),
    "130",
    "Chain id the RPC endpoint and the deployment must match"
  ),
  retryMaxMs: withDefault(
    "INDEXER_RETRY_MAX_MS",
    read.boundedInteger(100, 600_000, "milliseconds, 100..600000"),
    "5000",
    "Longest pause, in milliseconds, between two attempts of the indexer (and of a start) at a database or node that is gone; the pauses grow from 100 ms to it"
  ),
  host: withDefault("HOST", read.nonEmpty, "127.0.0.1", "Interface the HTTP servers bind to"),
  indexerPort: withDefault("INDEXER_PORT", port, "42069", "Port of the indexer HTTP API (`0` = any free port)"),
  backendPort: withDefault("BACKEND_PORT", port, "3000", "Port of the backend HTTP API (`0` = any free port)"),
  logLevel: withDefault("LOG_LEVEL", read.logLevel, "info", "Minimum log level: trace, debug, info, warning, error, fatal or none"),
  logFormat: withDefault(
    "LOG_FORMAT",
    read.oneOf(["auto", "logfmt"] as const),
    "auto",
    "auto: `start` on a terminal shows a start screen (URLs, chain id, the devnet's accounts, a backfill progress bar) and readable lines, logfmt elsewhere; logfmt: always logfmt lines"
  ),
  chain: withDefault(
    "CHAIN",
    read.oneOf(["devnet", "fixture"] as const),
    "devnet",
    "What to index when RPC_URL is unset: devnet (a live local anvil chain under `DATA_DIR/devnet`, the fixture's history in place) or fixture (the committed recording, replayed: frozen, for tests)"
  ),
  devnetActivity: withDefault(
    "DEVNET_ACTIVITY",
    read.onOff,
    "on",
    "on: a seeded background market keeps trading on the live devnet; off: the chain only mines"
  ),
  faucetPrivateKey: optional(
    "FAUCET_PRIVATE_KEY",
    read.privateKey,
    "a funded anvil key on the default devnet; otherwise the faucet answers 503",
    "Private key (0x + 64 hex) the faucet signs its transfers with; never logged"
  ),
  faucetEthWei: withDefault("FAUCET_ETH", read.ether, "0.0005", "ETH sent with each faucet claim, for gas (decimal, at most 18 places)"),
  bundlerUrl: optional(
    "BUNDLER_URL",
    read.urlWithSchemes(["http", "https"]),
    "the live devnet's own alto bundler, started and stopped with it",
    "ERC-4337 bundler JSON-RPC endpoint (EntryPoint v0.7) user operations are sent to"
  ),
  paymasterSignerKey: optional(
    "PAYMASTER_SIGNER_KEY",
    read.privateKey,
    "the devnet paymaster's funded anvil signer key (account 18)",
    "Private key (0x + 64 hex) that signs paymaster sponsorships; on the devnet the paymaster is set to it at start; never logged"
  ),
  aaCaps: {
    dailyBudgetWei: withDefault(
      "AA_DAILY_BUDGET",
      read.ether,
      "0.05",
      "ETH of gas the paymaster sponsors per smart account per UTC day (sum of the operations' maximum cost; decimal)"
    ),
    maxCallGas: withDefault("AA_MAX_CALL_GAS", read.positiveBigint, "2000000", "Sponsorship cap on a user operation's `callGasLimit`"),
    maxVerificationGas: withDefault(
      "AA_MAX_VERIFICATION_GAS",
      read.positiveBigint,
      "2000000",
      "Sponsorship cap on a user operation's `verificationGasLimit`"
    ),
    maxPreVerificationGas: withDefault(
      "AA_MAX_PRE_VERIFICATION_GAS",
      read.positiveBigint,
      "500000",
      "Sponsorship cap on a user operation's `preVerificationGas`"
    ),
    maxFeePerGas: withDefault(
      "AA_MAX_FEE_PER_GAS",
      read.positiveBigint,
      "100000000000",
      "Sponsorship cap on a user operation's `maxFeePerGas`, wei"
    ),
    validitySeconds: withDefault(
      "AA_SPONSOR_VALIDITY",
      read.boundedInteger(1, 600, "seconds, 1..600"),
      "600",
      "Seconds a sponsorship is valid (`validUntil - validAfter`, chain time), 1..600"
    )
  },
  webauthnRpId: optional(
    "WEBAUTHN_RP_ID",
    read.nonEmpty,
    "PUBLIC_URL's host name",
    "WebAuthn relying-party id passkeys are registered and asserted for"
  ),
  webauthnOrigins: optional(
    "WEBAUTHN_ORIGINS",
    read.commaList(read.origin),
    "PUBLIC_URL's origin",
    "Comma-separated origins passkey ceremonies may come from"
  ),
  publicUrl: withDefault(
    "PUBLIC_URL",
    read.urlWithSchemes(["http", "https"]),
    "http://localhost:3000",
    "Origin apps sign in from: the SIWE domain and URI, always an allowed origin; session cookies are `Secure` unless it is plain http on localhost"
  ),
  corsOrigins: optional(
    "CORS_ORIGINS",
    read.commaList(read.origin),
    "PUBLIC_URL only",
    "Comma-separated further origins allowed to call the backend with credentials"
  ).map(Option.getOrElse((): ReadonlyArray<string> => [])),
  adminAddresses: optional(
    "ADMIN_ADDRESSES",
    read.commaList(read.address),
    "none",
    "Comma-separated addresses given the `admin` role at every start"
  ).map(Option.getOrElse((): ReadonlyArray<string> => [])),
  redisUrl: optional(
    "REDIS_URL",
    read.secretUrl(["redis", "rediss"]),
    "in-process rate-limit counters",
    "Redis shared by every backend instance for rate-limit counters (`redis://host:port`)"
  ),
  trustProxy: optional(
    "TRUST_PROXY",
    read.trustProxy,
    "the socket's address is the client",
    "Proxies whose `X-Forwarded-For` is believed: a hop count (e.g. `1`) or a comma-separated list of addresses/CIDRs"
  ).map(Option.getOrElse(() => noProxy)),
  rateLimits: {
    publicPerMinute: withDefault(
      "RATE_LIMIT_PUBLIC_PER_MINUTE",
      requests,
      "60",
      "Requests per minute per IP without a session (`0` = unlimited)"
    ),
    userPerMinute: withDefault("RATE_LIMIT_USER_PER_MINUTE", requests, "300", "Requests per minute per signed-in user (`0` = unlimited)"),
    perDay: withDefault("RATE_LIMIT_PER_DAY", requests, "10000", "Requests per day per IP (no session) or per user (`0` = unlimited)"),
    authPerMinute: withDefault(
      "RATE_LIMIT_AUTH_PER_MINUTE",
      requests,
      "5",
      "Requests per minute per IP to the sign-in endpoints (`/api/auth/challenge`, `/api/auth/verify`, `/api/aa/auth/...`; `0` = unlimited)"
    )
  },
  comments: {
    cooldownSeconds: withDefault(
      "COMMENT_COOLDOWN_SECONDS",
      read.boundedInteger(0, 86_400, "seconds"),
      "30",
      "Seconds between two comments of one user (`0` = none)"
    ),
    perDay: withDefault("COMMENTS_PER_DAY", read.boundedInteger(1, 100_000, "a number of comments"), "50", "Comments per user per UTC day"),
    editWindowSeconds: withDefault(
      "COMMENT_EDIT_WINDOW_SECONDS",
      read.boundedInteger(0, 30 * 86_400, "seconds"),
      "900",
      "Seconds after posting the author may edit a comment"
    )
  },
  health: {
    maxLagBlocks: withDefault(
      "HEALTH_MAX_LAG_BLOCKS",
      blocks,
      "20",
      "Blocks the index may trail the node's head before `/api/health`, `/health` and `/ready` say degraded"
    ),
    maxStaleSeconds: withDefault(
      "HEALTH_MAX_STALE_SECONDS",
      read.boundedInteger(1, 86_400, "seconds"),
      "15",
      "Seconds the indexer may go without reporting progress, and the node without answering, before health says degraded"
    )
  },
  leaderboardMinResolved: withDefault(
    "LEADERBOARD_MIN_RESOLVED",
    read.boundedInteger(1, 1_000_000, "a number of markets"),
    "5",
    "Resolved markets with a call a user needs before `/api/leaderboard` shows and ranks their accuracy"
  ),
  notificationHorizonBlocks: withDefault(
    "NOTIFY_HORIZON_BLOCKS",
    blocks,
    "3600",
    "Only chain events in the last this many blocks below the chain head are notified; older history (a backfill) is skipped"
  )
}

/** The variables in the order `--help` and docs/settings.md list them. */
export const settings = listOf(settingTree)
