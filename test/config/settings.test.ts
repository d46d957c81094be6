/**
 * The one settings list (src/config/settings.ts) against what is derived from it: the loader
 * reads exactly the listed variables, each default shown is the default used, and the table of
 * docs/settings.md is the one the code prints.
 */
import { ConfigError, ConfigProvider, ConfigProviderPathPatch, Effect, Exit, HashSet, Option, Redacted } from "effect"
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { appConfig, loadConfig, settings } from "../../src/config.js"
import { settingsTable } from "../../src/config/help.js"

const SETTINGS_DOC = Path.join(Path.dirname(fileURLToPath(import.meta.url)), "../../docs/settings.md")

/** Loads the configuration from `env` alone (not the process environment). */
const load = (env: Record<string, string>) =>
  Effect.runSyncExit(loadConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))))

const value = (env: Record<string, string>) => {
  const exit = load(env)
  if (Exit.isFailure(exit)) throw new Error(`configuration refused: ${JSON.stringify(env)}`)
  return exit.value
}

const failure = (env: Record<string, string>) => {
  const exit = load(env)
  if (Exit.isSuccess(exit)) throw new Error(`configuration accepted: ${JSON.stringify(env)}`)
  return Option.getOrThrow(Exit.causeOption(exit)).toString()
}

describe("the settings list", () => {
  it("names each variable once, and the loader reads exactly those variables", () => {
    const listed = settings.map((s) => s.name)
    expect(new Set(listed).size).toBe(listed.length)
    // A provider that has nothing and writes down every variable asked for.
    const asked: Array<string> = []
    const recording = ConfigProvider.fromFlat(
      ConfigProvider.makeFlat({
        load: (path) => {
          asked.push(path.join("_"))
          return Effect.fail(ConfigError.MissingData([...path], `${path.join("_")} is not set`))
        },
        enumerateChildren: () => Effect.succeed(HashSet.empty()),
        patch: ConfigProviderPathPatch.empty
      })
    )
    Effect.runSync(Effect.withConfigProvider(appConfig, recording))
    expect([...new Set(asked)].sort()).toEqual([...listed].sort())
  })

  it("reads an unset variable as its default text would read when set", () => {
    const unset = value({})
    for (const setting of settings) {
      if (setting.fallback._tag !== "Text") continue
      expect(value({ [setting.name]: setting.fallback.text }), `${setting.name}=${setting.fallback.text}`).toEqual(unset)
    }
    // The defaults as values, for the readers that convert (ETH to wei, on/off, paths).
    expect(unset.faucetEthWei).toBe(500_000_000_000_000n)
    expect(unset.aaCaps.dailyBudgetWei).toBe(50_000_000_000_000_000n)
    expect(unset.aaCaps.maxFeePerGas).toBe(100_000_000_000n)
    expect(unset.devnetActivity).toBe(true)
    expect(unset.dataDir).toBe(Path.resolve(".data"))
    expect(unset.corsOrigins).toEqual([])
    expect(unset.adminAddresses).toEqual([])
    expect(unset.trustProxy).toEqual({ _tag: "None" })
    expect(Option.isNone(unset.databaseUrl)).toBe(true)
  })

  it("reads set values through the listed readers", () => {
    const set = value({
      DATABASE_URL: "postgres://u:secret@db:5432/x",
      ADMIN_ADDRESSES: "0xABABABABABABABABABABABABABABABABABABABAB, ",
      CORS_ORIGINS: "https://a.example/path",
      FAUCET_ETH: "1.5",
      COMMENTS_PER_DAY: "7",
      DEVNET_ACTIVITY: "OFF"
    })
    expect(Option.map(set.databaseUrl, Redacted.value)).toEqual(Option.some("postgres://u:secret@db:5432/x"))
    expect(set.adminAddresses).toEqual(["0xabababababababababababababababababababab"])
    expect(set.corsOrigins).toEqual(["https://a.example"])
    expect(set.faucetEthWei).toBe(1_500_000_000_000_000_000n)
    expect(set.comments.perDay).toBe(7)
    expect(set.devnetActivity).toBe(false)
  })

  it("names the variable of every bad value, keys without their value", () => {
    const message = failure({ PG_PORT: "70000", FAUCET_PRIVATE_KEY: "0x12", PAYMASTER_SIGNER_KEY: "0xsecret", COMMENTS_PER_DAY: "0" })
    expect(message).toMatch(/PG_PORT: expected a TCP port between 0 and 65535, got 70000/)
    expect(message).toMatch(/FAUCET_PRIVATE_KEY: expected 0x followed by 64 hex digits \(value not shown\)/)
    expect(message).toMatch(/PAYMASTER_SIGNER_KEY: expected 0x followed by 64 hex digits \(value not shown\)/)
    expect(message).toMatch(/COMMENTS_PER_DAY: expected a number of comments between 1 and 100000, got 0/)
    expect(message).not.toMatch(/0xsecret/)
    expect(failure({ DATABASE_URL: "mysql://u:secret@db/x" })).toMatch(/DATABASE_URL: expected a URL with scheme postgres, postgresql/)
    expect(failure({ DATABASE_URL: "not a url//u:secret@x" })).not.toMatch(/secret/)
  })

  it("is the table of docs/settings.md", async () => {
    const doc = await fs.readFile(SETTINGS_DOC, "utf8")
    // The document's one table is printed by settingsTable(); after a change in settings.ts, paste its output there.
    const rows = doc.split("\n").filter((line) => line.startsWith("|"))
    expect(rows.join("\n")).toBe(settingsTable())
  })
})
