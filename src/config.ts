/**
 * Configuration from environment variables, read once at start through Effect `Config`.
 *
 * Every variable has a default that runs on one machine with nothing installed but Node, and a
 * one-line description; `settings` is the single list that both the config loader and
 * `--help` read, so the help can never drift from what is actually read.
 *
 * Invariant: an invalid value stops the process at start with a message naming the variable and
 * what is wrong (see `describeConfigError`); nothing runs on a half-valid configuration.
 */
import { Config, ConfigError, Context, Data, Effect, Either, Layer, LogLevel, Option, Redacted } from "effect"
import * as Path from "node:path"
import { noProxy, parseTrustProxy, type TrustProxy } from "../http/backend/client-ip.js"
import { parseAddress } from "../schema/primitives.js"

export interface Setting {
  readonly name: string
  readonly defaultText: string
  readonly description: string
}

/** The variables this program reads, in the order `--help` lists them. */
export const settings: ReadonlyArray<Setting> = [
  {
    name: "DATABASE_URL",
    defaultText: "(unset: embedded Postgres under DATA_DIR)",
    description: "Postgres connection URL (postgres://user:pass@host:port/db); unset starts an embedded Postgres"
  },
  {
    name: "DATA_DIR",
    defaultText: ".data",
    description: "Directory for local state: the embedded Postgres cluster and its connection file"
  },
  {
    name: "PG_PORT",
    defaultText: "54329",
    description: "Loopback port of the embedded Postgres (0 = any free port); ignored when DATABASE_URL is set"
  },
  {
    name: "RPC_URL",
    defaultText: "(unset: nothing to index until the bundled fixture is recorded)",
    description: "JSON-RPC endpoint of the chain to index (http, https, ws or wss); also the default of `record --rpc`"
  },
  {
    name: "DEPLOYMENT",
    defaultText: "(unset: none; checked at start when set)",
    description: "Path to the deployment file: JSON with every contract address of the spec plus deployBlock"
  },
  { name: "CHAIN_ID", defaultText: "130", description: "Chain id the RPC endpoint and the deployment must match" },
  { name: "HOST", defaultText: "127.0.0.1", description: "Interface the HTTP servers bind to" },
  { name: "INDEXER_PORT", defaultText: "42069", description: "Port of the indexer HTTP API (0 = any free port)" },
  { name: "BACKEND_PORT", defaultText: "3000", description: "Port of the backend HTTP API (0 = any free port)" },
  { name: "LOG_LEVEL", defaultText: "info", description: "Minimum log level: trace, debug, info, warning, error, fatal or none" },
  {
    name: "CHAIN",
    defaultText: "devnet",
    description:
      "What to index when RPC_URL is unset: devnet (a live local anvil chain under DATA_DIR/devnet, the fixture's history in place) or fixture (the committed recording, replayed: frozen, for tests)"
  },
  {
    name: "DEVNET_ACTIVITY",
    defaultText: "on",
    description: "on: a seeded background market keeps trading on the live devnet; off: the chain only mines"
  },
  {
    name: "FAUCET_PRIVATE_KEY",
    defaultText: "(unset: a funded anvil key on the default devnet; otherwise the faucet answers 503)",
    description: "Private key (0x + 64 hex) the faucet signs its transfers with; never logged"
  },
  { name: "FAUCET_ETH", defaultText: "0.0005", description: "ETH sent with each faucet claim, for gas (decimal, at most 18 places)" },
  {
    name: "BUNDLER_URL",
    defaultText: "(unset: the live devnet's own alto bundler, started and stopped with it)",
    description: "ERC-4337 bundler JSON-RPC endpoint (EntryPoint v0.7) user operations are sent to"
  },
  {
    name: "PAYMASTER_SIGNER_KEY",
    defaultText: "(unset: the devnet paymaster's funded anvil signer key)",
    description:
      "Private key (0x + 64 hex) that signs paymaster sponsorships; on the devnet the paymaster is set to it at start; never logged"
  },
  {
    name: "AA_DAILY_BUDGET",
    defaultText: "0.05",
    description: "ETH of gas the paymaster sponsors per smart account per UTC day (operations' maximum cost; decimal)"
  },
  { name: "AA_MAX_CALL_GAS", defaultText: "2000000", description: "Sponsorship cap on a user operation's callGasLimit" },
  { name: "AA_MAX_VERIFICATION_GAS", defaultText: "2000000", description: "Sponsorship cap on a user operation's verificationGasLimit" },
  { name: "AA_MAX_PRE_VERIFICATION_GAS", defaultText: "500000", description: "Sponsorship cap on a user operation's preVerificationGas" },
  { name: "AA_MAX_FEE_PER_GAS", defaultText: "100000000000", description: "Sponsorship cap on a user operation's maxFeePerGas, wei" },
  {
    name: "AA_SPONSOR_VALIDITY",
    defaultText: "600",
    description: "Seconds a sponsorship is valid (validUntil - validAfter, chain time), 1..600"
  },
  {
    name: "WEBAUTHN_RP_ID",
    defaultText: "(unset: PUBLIC_URL's host name)",
    description: "WebAuthn relying-party id passkeys are registered and asserted for"
  },
  {
    name: "WEBAUTHN_ORIGINS",
    defaultText: "(unset: PUBLIC_URL's origin)",
    description: "Comma-separated origins passkey ceremonies may come from"
  },
  {
    name: "PUBLIC_URL",
    defaultText: "http://localhost:3000",
    description:
      "Origin apps sign in from: the SIWE domain and URI, always an allowed origin; session cookies are Secure unless it is http on localhost"
  },
  {
    name: "CORS_ORIGINS",
    defaultText: "(unset: PUBLIC_URL only)",
    description: "Comma-separated further origins allowed to call the backend with credentials"
  },
  { name: "ADMIN_ADDRESSES", defaultText: "(unset: none)", description: "Comma-separated addresses given the admin role at start" },
  {
    name: "REDIS_URL",
    defaultText: "(unset: in-process rate-limit counters)",
    description: "Redis shared by every backend instance for rate-limit counters (redis://host:port)"
  },
  {
    name: "TRUST_PROXY",
    defaultText: "(unset: the socket's address is the client)",
    description: "Proxies whose X-Forwarded-For is believed: a hop count (e.g. 1) or a comma-separated list of addresses/CIDRs"
  },
  { name: "RATE_LIMIT_PUBLIC_PER_MINUTE", defaultText: "60", description: "Requests per minute per IP without a session (0 = unlimited)" },
  { name: "RATE_LIMIT_USER_PER_MINUTE", defaultText: "300", description: "Requests per minute per signed-in user (0 = unlimited)" },
  { name: "RATE_LIMIT_PER_DAY", defaultText: "10000", description: "Requests per day per IP (no session) or user (0 = unlimited)" },
  {
    name: "RATE_LIMIT_AUTH_PER_MINUTE",
    defaultText: "5",
    description: "Requests per minute per IP to /api/auth/challenge and /api/auth/verify (0 = unlimited)"
  },
  {
    name: "HEALTH_MAX_LAG_BLOCKS",
    defaultText: "20",
    description: "Blocks the index may trail the node's head before /api/health, /health and /ready say degraded"
  },
  {
    name: "HEALTH_MAX_STALE_SECONDS",
    defaultText: "15",
    description: "Seconds the indexer may go without reporting progress, and the node without answering, before health says degraded"
  },
  {
    name: "LEADERBOARD_MIN_RESOLVED",
    defaultText: "5",
    description: "Resolved markets with a call a user needs before /api/leaderboard shows and ranks their accuracy"
  },
  {
    name: "NOTIFY_HORIZON_BLOCKS",
    defaultText: "3600",
    description: "Only chain events in the last this many blocks below the chain head are notified; older history (a backfill) is skipped"
  }
]

export interface AppConfigShape {
  readonly databaseUrl: Option.Option<Redacted.Redacted<string>>
  readonly dataDir: string
  readonly pgPort: number
  readonly rpcUrl: Option.Option<string>
  readonly deploymentPath: Option.Option<string>
  readonly chainId: number
  readonly host: string
  readonly indexerPort: number
  readonly backendPort: number
  readonly logLevel: LogLevel.LogLevel
  readonly chain: "devnet" | "fixture"
  readonly devnetActivity: boolean
  readonly faucetPrivateKey: Option.Option<Redacted.Redacted<`0x${string}`>>
  /** FAUCET_ETH in wei. */
  readonly faucetEthWei: bigint
  readonly bundlerUrl: Option.Option<string>
  readonly paymasterSignerKey: Option.Option<Redacted.Redacted<`0x${string}`>>
  readonly aaCaps: {
    readonly dailyBudgetWei: bigint
    readonly maxCallGas: bigint
    readonly maxVerificationGas: bigint
    readonly maxPreVerificationGas: bigint
    readonly maxFeePerGas: bigint
    readonly validitySeconds: number
  }
  readonly webauthnRpId: Option.Option<string>
  readonly webauthnOrigins: Option.Option<ReadonlyArray<string>>
  readonly publicUrl: string
  readonly corsOrigins: ReadonlyArray<string>
  readonly adminAddresses: ReadonlyArray<string>
  readonly redisUrl: Option.Option<Redacted.Redacted<string>>
  readonly trustProxy: TrustProxy
  /** Comment posting and editing: COMMENT_COOLDOWN_SECONDS, COMMENTS_PER_DAY, COMMENT_EDIT_WINDOW_SECONDS. */
  readonly comments: {
    readonly cooldownSeconds: number
    readonly perDay: number
    readonly editWindowSeconds: number
  }
  readonly rateLimits: {
    readonly publicPerMinute: number
    readonly userPerMinute: number
    readonly perDay: number
    readonly authPerMinute: number
  }
  readonly leaderboardMinResolved: number
  /** The notification consumer's horizon (`http/backend/notification-consumer.ts`). */
  readonly notificationHorizonBlocks: number
  /** When health turns degraded (`http/indexer/health-watch.ts`). */
  readonly health: { readonly maxLagBlocks: number; readonly maxStaleSeconds: number }
}

// The Config combinators prefix the variable name to the path; the message says what is wrong.
const invalid = (_name: string, message: string) => ConfigError.InvalidData([], message)

/** An integer in [min, max], read from a decimal string with nothing else in it. */
const boundedInteger = (name: string, min: number, max: number, what: string) =>
  Config.string(name).pipe(
    Config.mapOrFail((raw) => {
      const text = raw.trim()
      if (!/^\d+$/.test(text)) return Either.left(invalid(name, `expected ${what}, got "${raw}"`))
      const value = Number(text)
      if (!Number.isSafeInteger(value) || value < min || value > max) {
        return Either.left(invalid(name, `expected ${what} between ${min} and ${max}, got ${text}`))
      }
      return Either.right(value)
    })
  )

const urlWithSchemes = (name: string, schemes: ReadonlyArray<string>) =>
  Config.string(name).pipe(
    Config.mapOrFail((raw) => {
      let url: URL
      try {
        url = new URL(raw.trim())
      } catch {
        return Either.left(invalid(name, `expected a URL (${schemes.join(", ")}), got "${redactUrl(raw)}"`))
      }
      const scheme = url.protocol.replace(/:$/, "")
      if (!schemes.includes(scheme)) {
        return Either.left(invalid(name, `expected a URL with scheme ${schemes.join(", ")}, got "${scheme}:"`))
      }
      return Either.right(raw.trim())
    })
  )

/** Hides the password of a connection URL in messages. */
export const redactUrl = (raw: string): string => raw.replace(/(\/\/[^:/@]+:)[^@]*@/, "$1***@")

const logLevels: Record<string, LogLevel.LogLevel> = {
  all: LogLevel.All,
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  warn: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None
}

const logLevel = Config.string("LOG_LEVEL").pipe(
  Config.mapOrFail((raw) => {
    const level = logLevels[raw.trim().toLowerCase()]
    return level === undefined
      ? Either.left(invalid("LOG_LEVEL", `expected one of trace, debug, info, warning, error, fatal, none, got "${raw}"`))
      : Either.right(level)
  })
)

const nonEmpty = (name: string) =>
  Config.string(name).pipe(
    Config.mapOrFail((raw) => (raw.trim() === "" ? Either.left(invalid(name, "must not be empty")) : Either.right(raw.trim())))
  )

const oneOf = <A extends string>(name: string, values: ReadonlyArray<A>) =>
  Config.string(name).pipe(
    Config.mapOrFail((raw) => {
      const value = raw.trim().toLowerCase() as A
      return values.includes(value) ? Either.right(value) : Either.left(invalid(name, `expected one of ${values.join(", ")}, got "${raw}"`))
    })
  )

// The value is never echoed: it is a secret.
const privateKey = (name: string) =>
  Config.redacted(name).pipe(
    Config.mapOrFail((raw) => {
      const key = Redacted.value(raw).trim().toLowerCase()
      return /^0x[0-9a-f]{64}$/.test(key)
        ? Either.right(Redacted.make(key as `0x${string}`))
        : Either.left(invalid(name, "expected 0x followed by 64 hex digits (value not shown)"))
    })
  )

/** A decimal ETH amount as wei. */
const ether = (name: string) =>
  Config.string(name).pipe(
    Config.mapOrFail((raw) => {
      const match = /^(\d+)(?:\.(\d{1,18}))?$/.exec(raw.trim())
      if (match === null) return Either.left(invalid(name, `expected a decimal amount of ETH with at most 18 decimal places, got "${raw}"`))
      return Either.right(BigInt(match[1]!) * 10n ** 18n + BigInt((match[2] ?? "").padEnd(18, "0")))
    })
  )
/** A comma-separated list, each item checked by `parse` (which returns the normal form or an error message). */
const commaList = (name: string, parse: (item: string) => Either.Either<string, string>) =>
  Config.string(name).pipe(
    Config.mapOrFail((raw) => {
      const items: Array<string> = []
      for (const item of raw
        .split(",")
        .map((i) => i.trim())
        .filter((i) => i !== "")) {
        const parsed = parse(item)
        if (Either.isLeft(parsed)) return Either.left(invalid(name, parsed.left))
        items.push(parsed.right)
      }
      return Either.right(items)
    })
  )

const origin = (item: string): Either.Either<string, string> => {
  try {
    const url = new URL(item)
    if (url.protocol !== "http:" && url.protocol !== "https:") return Either.left(`expected an http(s) origin, got "${item}"`)
    return Either.right(url.origin)
  } catch {
    return Either.left(`expected an origin such as https://app.example.com, got "${item}"`)
  }
}

const address = (item: string): Either.Either<string, string> =>
  Either.mapLeft(parseAddress(item), () => `expected 0x-prefixed 20-byte addresses, got "${item}"`)

const rateLimit = (name: string, fallback: number) =>
  boundedInteger(name, 0, 1_000_000_000, "a request count").pipe(Config.withDefault(fallback))

const gasCap = (name: string, fallback: number) =>
  boundedInteger(name, 1, Number.MAX_SAFE_INTEGER, "a positive integer").pipe(Config.withDefault(fallback), Config.map(BigInt))

/** The whole configuration as one `Config`; every failure names its variable. */
export const appConfig: Config.Config<AppConfigShape> = Config.all({
  databaseUrl: Config.option(urlWithSchemes("DATABASE_URL", ["postgres", "postgresql"]).pipe(Config.map(Redacted.make))),
  dataDir: nonEmpty("DATA_DIR").pipe(
    Config.withDefault(".data"),
    Config.map((dir) => Path.resolve(dir))
  ),
  pgPort: boundedInteger("PG_PORT", 0, 65535, "a TCP port").pipe(Config.withDefault(54329)),
  rpcUrl: Config.option(urlWithSchemes("RPC_URL", ["http", "https", "ws", "wss"])),
  deploymentPath: Config.option(nonEmpty("DEPLOYMENT").pipe(Config.map((p) => Path.resolve(p)))),
  chainId: boundedInteger("CHAIN_ID", 1, Number.MAX_SAFE_INTEGER, "a positive integer chain id").pipe(Config.withDefault(130)),
  host: nonEmpty("HOST").pipe(Config.withDefault("127.0.0.1")),
  indexerPort: boundedInteger("INDEXER_PORT", 0, 65535, "a TCP port").pipe(Config.withDefault(42069)),
  backendPort: boundedInteger("BACKEND_PORT", 0, 65535, "a TCP port").pipe(Config.withDefault(3000)),
  logLevel: logLevel.pipe(Config.withDefault(LogLevel.Info)),
  chain: oneOf("CHAIN", ["devnet", "fixture"] as const).pipe(Config.withDefault("devnet" as const)),
  devnetActivity: oneOf("DEVNET_ACTIVITY", ["on", "off"] as const).pipe(
    Config.map((v) => v === "on"),
    Config.withDefault(true)
  ),
  faucetPrivateKey: Config.option(privateKey("FAUCET_PRIVATE_KEY")),
  faucetEthWei: ether("FAUCET_ETH").pipe(Config.withDefault(5n * 10n ** 14n)),
  bundlerUrl: Config.option(urlWithSchemes("BUNDLER_URL", ["http", "https"])),
  paymasterSignerKey: Config.option(privateKey("PAYMASTER_SIGNER_KEY")),
  aaCaps: Config.all({
    dailyBudgetWei: ether("AA_DAILY_BUDGET").pipe(Config.withDefault(5n * 10n ** 16n)),
    maxCallGas: gasCap("AA_MAX_CALL_GAS", 2_000_000),
    maxVerificationGas: gasCap("AA_MAX_VERIFICATION_GAS", 2_000_000),
    maxPreVerificationGas: gasCap("AA_MAX_PRE_VERIFICATION_GAS", 500_000),
    maxFeePerGas: gasCap("AA_MAX_FEE_PER_GAS", 100_000_000_000),
    validitySeconds: boundedInteger("AA_SPONSOR_VALIDITY", 1, 600, "seconds, 1..600").pipe(Config.withDefault(600))
  }),
  webauthnRpId: Config.option(nonEmpty("WEBAUTHN_RP_ID")),
  webauthnOrigins: Config.option(commaList("WEBAUTHN_ORIGINS", origin)),
  publicUrl: urlWithSchemes("PUBLIC_URL", ["http", "https"]).pipe(Config.withDefault("http://localhost:3000")),
  corsOrigins: commaList("CORS_ORIGINS", origin).pipe(Config.withDefault([])),
  adminAddresses: commaList("ADMIN_ADDRESSES", address).pipe(Config.withDefault([])),
  redisUrl: Config.option(urlWithSchemes("REDIS_URL", ["redis", "rediss"]).pipe(Config.map(Redacted.make))),
  trustProxy: Config.string("TRUST_PROXY").pipe(
    Config.mapOrFail((raw) => Either.mapLeft(parseTrustProxy(raw), (problem) => invalid("TRUST_PROXY", problem))),
    Config.withDefault(noProxy)
  ),
  comments: Config.all({
    cooldownSeconds: boundedInteger("COMMENT_COOLDOWN_SECONDS", 0, 86_400, "seconds").pipe(Config.withDefault(30)),
    perDay: boundedInteger("COMMENTS_PER_DAY", 1, 100_000, "a number of comments").pipe(Config.withDefault(50)),
    editWindowSeconds: boundedInteger("COMMENT_EDIT_WINDOW_SECONDS", 0, 30 * 86_400, "seconds").pipe(Config.withDefault(900))
  }),
  rateLimits: Config.all({
    publicPerMinute: rateLimit("RATE_LIMIT_PUBLIC_PER_MINUTE", 60),
    userPerMinute: rateLimit("RATE_LIMIT_USER_PER_MINUTE", 300),
    perDay: rateLimit("RATE_LIMIT_PER_DAY", 10_000),
    authPerMinute: rateLimit("RATE_LIMIT_AUTH_PER_MINUTE", 5)
  }),
  leaderboardMinResolved: boundedInteger("LEADERBOARD_MIN_RESOLVED", 1, 1_000_000, "a number of markets").pipe(Config.withDefault(5)),
  notificationHorizonBlocks: boundedInteger("NOTIFY_HORIZON_BLOCKS", 0, 1_000_000_000, "a number of blocks").pipe(
    Config.withDefault(3_600)
  ),
  health: Config.all({
    maxLagBlocks: boundedInteger("HEALTH_MAX_LAG_BLOCKS", 0, 1_000_000_000, "a number of blocks").pipe(Config.withDefault(20)),
    maxStaleSeconds: boundedInteger("HEALTH_MAX_STALE_SECONDS", 1, 86_400, "seconds").pipe(Config.withDefault(15))
  })
})

/** One line per problem: `VARIABLE: what is wrong`. */
export const describeConfigError = (error: ConfigError.ConfigError): string => {
  const lines: Array<string> = []
  const walk = (e: ConfigError.ConfigError): void => {
    switch (e._op) {
      case "And":
      case "Or":
        walk(e.left)
        walk(e.right)
        return
      case "InvalidData":
      case "MissingData":
      case "SourceUnavailable":
      case "Unsupported":
        lines.push(`${e.path.join(".") || "(configuration)"}: ${e.message}`)
        return
    }
  }
  walk(error)
  return [...new Set(lines)].join("\n")
}

/** Loads the configuration or fails with a readable message. */
export const loadConfig: Effect.Effect<AppConfigShape, ConfigurationError> = Effect.mapError(
  appConfig,
  (error) => new ConfigurationError({ message: `invalid configuration\n${describeConfigError(error)}` })
)

export class ConfigurationError extends Data.TaggedError("ConfigurationError")<{ readonly message: string }> {}

/** The `--help` section listing every variable with its default. */
export const settingsHelp = (): string => {
  const width = Math.max(...settings.map((s) => s.name.length))
  return settings.map((s) => `  ${s.name.padEnd(width)}  ${s.description}\n  ${" ".repeat(width)}  default: ${s.defaultText}`).join("\n")
}

export class AppConfig extends Context.Tag("AppConfig")<AppConfig, AppConfigShape>() {
  /** Reads the environment; fails with a ConfigError naming every bad variable. */
  static readonly layer = Layer.effect(AppConfig, loadConfig)
}
