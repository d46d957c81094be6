/**
 * The live devnet's funded accounts, as the start screen lists them: anvil's well-known test
 * mnemonic, so their keys are public knowledge and printing them is what anvil itself does.
 *
 * Invariant: only these keys are ever shown, derived here from the public mnemonic, and only for
 * the live devnet this process runs (app.ts calls `StartScreen.showDevnet` there and nowhere
 * else): a configured key (FAUCET_PRIVATE_KEY, PAYMASTER_SIGNER_KEY) never reaches the screen.
 */
import { Effect, Option } from "effect"
import { pbkdf2Sync } from "node:crypto"
import { bytesToHex } from "viem"
import { HDKey, hdKeyToAccount } from "viem/accounts"
import { BUNDLER_EXECUTOR_ACCOUNT, BUNDLER_UTILITY_ACCOUNT, PAYMASTER_ACCOUNT } from "../../tools/devnet/aa-deploy.js"
import { DEVNET_ACCOUNTS, DEVNET_MNEMONIC } from "../../tools/devnet/anvil.js"
import { ADMIN, REPORTER } from "../../tools/devnet/deploy.js"
import { FAUCET_ACCOUNT } from "../../tools/devnet/live-state.js"
import { Screen } from "./output.js"
import type { DevAccount } from "./render.js"

export { DEVNET_MNEMONIC }

/** Accounts listed one by one, as anvil lists ten. */
export const LISTED_ACCOUNTS = 10

/** BIP-39's seed (PBKDF2-SHA512, 2048 rounds), natively: one derivation for every account instead of one each. */
const seedOf = (mnemonic: string, passphrase = "") =>
  pbkdf2Sync(Buffer.from(mnemonic.normalize("NFKD")), Buffer.from(`mnemonic${passphrase}`.normalize("NFKD")), 2048, 64, "sha512")

const roleOf = (index: number, activity: boolean): string =>
  index === ADMIN
    ? "admin (launches markets)"
    : index === REPORTER
      ? "oracle reporter"
      : activity
        ? "trades in the background activity"
        : "trader"

/** Accounts 0..LISTED_ACCOUNTS-1 of the devnet mnemonic (m/44'/60'/0'/0/i), addresses lowercase. */
export const devnetAccounts = (activity: boolean): ReadonlyArray<DevAccount> => {
  const master = HDKey.fromMasterSeed(seedOf(DEVNET_MNEMONIC))
  return Array.from({ length: LISTED_ACCOUNTS }, (_, index) => {
    const account = hdKeyToAccount(master, { addressIndex: index })
    return {
      index,
      address: account.address.toLowerCase(),
      privateKey: bytesToHex(account.getHdKey().privateKey!),
      role: roleOf(index, activity)
    }
  })
}

/** The line under the list: the other funded accounts, and the ones the service signs with. */
export const moreAccounts = `accounts ${LISTED_ACCOUNTS}-${DEVNET_ACCOUNTS - 1} are funded too (same mnemonic); leave ${PAYMASTER_ACCOUNT} (paymaster signer), ${FAUCET_ACCOUNT} (faucet), ${BUNDLER_UTILITY_ACCOUNT}-${BUNDLER_EXECUTOR_ACCOUNT} (bundler) to the service`

/**
 * Puts the live devnet (its RPC URL, its accounts and keys) on this process's screen, when it
 * shows one. Call it only where this process has started the live devnet at `rpcUrl`.
 */
export const showDevnetAccounts = (rpcUrl: string, activity: boolean) =>
  Effect.flatMap(
    Effect.serviceOption(Screen),
    Option.match({
      onNone: () => Effect.void,
      onSome: (screen) => Effect.sync(() => screen.showDevnet(rpcUrl, DEVNET_MNEMONIC, devnetAccounts(activity), moreAccounts))
    })
  )
