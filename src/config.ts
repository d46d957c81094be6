/**
 * Configuration from environment variables, read once at start through Effect `Config`.
 *
 * Every variable is declared once, in config/settings.ts (name, reader, default, description);
 * the loader here, `--help` and docs/settings.md's table are all derived from that list, so the help
 * can never drift from what is actually read.
 *
 * Invariant: an invalid value stops the process at start with a message naming the variable and
 * what is wrong (see `describeConfigError`); nothing runs on a half-valid configuration.
 */
import { type Config, type ConfigError, Context, Data, Effect, type LogLevel, type Option, type Redacted } from "effect"
import type { TrustProxy } from "../http/backend/edge/client-ip.js"
import { configOf } from "./config/setting.js"
import { settingTree } from "./config/settings.js"

export { redactUrl } from "./config/readers.js"
export { settings } from "./config/settings.js"

export interface AppConfigShape {
  readonly databaseUrl: Option.Option<Redacted.Redacted<string>>
  /** DATABASE_READ_URL: the read replicas of API processes (`src/db/read-replicas.ts`); empty: none. */
  readonly databaseReadUrls: ReadonlyArray<Redacted.Redacted<string>>
  /** DATABASE_READ_MAX_LAG_BLOCKS: how far a replica may trail the primary and stay in rotation. */
  readonly readMaxLagBlocks: number
  readonly dataDir: string
  readonly pgPort: number
  readonly rpcUrl: Option.Option<string>
  readonly deploymentPath: Option.Option<string>
  readonly chainId: number
  /** INDEXER_RETRY_MAX_MS: the cap of `healing`'s pauses (pipeline/healing.ts). */
  readonly retryMaxMs: number
  readonly host: string
  readonly indexerPort: number
  readonly backendPort: number
  readonly logLevel: LogLevel.LogLevel
  /** LOG_FORMAT: whether `start` on a terminal may show the start screen (src/screen/). */
  readonly logFormat: "auto" | "logfmt"
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
  /** The notification consumer's horizon (`http/backend/community/notification-consumer.ts`). */
  readonly notificationHorizonBlocks: number
  /** When health turns degraded (`http/indexer/health-watch.ts`). */
  readonly health: { readonly maxLagBlocks: number; readonly maxStaleSeconds: number }
}

/**
 * The whole configuration as one `Config`, derived from the settings list; every failure names
 * its variable. The annotation is the check that the list and `AppConfigShape` agree.
 */
export const appConfig: Config.Config<AppConfigShape> = configOf(settingTree)

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

/** The configuration this run read, once: `withConfig` (app.ts) loads it and provides it to the command's job. */
export class AppConfig extends Context.Tag("predix/AppConfig")<AppConfig, AppConfigShape>() {}
