/**
 * A thin transaction helper over viem for the devnet: mnemonic accounts by index, deploys and
 * calls that wait for their receipt (anvil mines each transaction at once) and fail with the
 * node's revert reason.
 */
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  encodeDeployData,
  http,
  type Abi,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
  WaitForTransactionReceiptTimeoutError
} from "viem"
import { mnemonicToAccount, type HDAccount } from "viem/accounts"
import { DEVNET_CHAIN_ID, DEVNET_MNEMONIC } from "./anvil.js"
import type { Artifacts } from "./compile.js"

export const devnetChain = (url: string) =>
  defineChain({
    id: DEVNET_CHAIN_ID,
    name: "predix devnet",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [url] } }
  })

export type Address = `0x${string}`

/**
 * How long a send may wait for its receipt (the request does, see `mined`): anvil mines at once,
 * or within the live devnet's 1 s block time; a loaded machine answers late.
 */
const MINED_MS = 15_000

export class DevnetClient {
  readonly public: PublicClient
  readonly test: ReturnType<typeof createTestClient>
  private readonly accounts = new Map<number, HDAccount>()
  private readonly chain: ReturnType<typeof devnetChain>

  constructor(
    readonly url: string,
    readonly artifacts: Artifacts
  ) {
    this.chain = devnetChain(url)
    const transport = http(url, { batch: false, retryCount: 0 })
    this.public = createPublicClient({ chain: this.chain, transport, pollingInterval: 20 })
    this.test = createTestClient({ chain: this.chain, mode: "anvil", transport })
  }

  account(index: number): HDAccount {
    let account = this.accounts.get(index)
    if (account === undefined) {
      account = mnemonicToAccount(DEVNET_MNEMONIC, { addressIndex: index })
      this.accounts.set(index, account)
    }
    return account
  }

  address(index: number): Address {
    return this.account(index).address.toLowerCase() as Address
  }

  private wallet(index: number) {
    return createWalletClient({
      account: this.account(index),
      chain: this.chain,
      transport: http(this.url, { retryCount: 0, timeout: MINED_MS })
    })
  }

  abi(contract: string): Abi {
    const artifact = this.artifacts[contract]
    if (artifact === undefined) throw new Error(`no compiled contract named ${contract}`)
    return artifact.abi
  }

  async deploy(
    from: number,
    contract: string,
    args: ReadonlyArray<unknown> = [],
    value = 0n
  ): Promise<{ address: Address; receipt: TransactionReceipt }> {
    const artifact = this.artifacts[contract]
    if (artifact === undefined) throw new Error(`no compiled contract named ${contract}`)
    const receipt = await this.mined(
      from,
      null,
      encodeDeployData({ abi: artifact.abi, bytecode: artifact.bytecode as Hex, args: [...args] }),
      value
    )
    if (receipt.contractAddress == null) throw new Error(`deploying ${contract} gave no address`)
    return { address: receipt.contractAddress.toLowerCase() as Address, receipt }
  }

  /** Sends a call as account `from`; throws (with the revert reason, decoded by the ABI) if it would revert. */
  async send(
    from: number,
    contract: string,
    address: Address,
    functionName: string,
    args: ReadonlyArray<unknown> = [],
    value = 0n
  ): Promise<TransactionReceipt> {
    return this.succeeded(
      this.wallet(from).writeContractSync({
        address,
        abi: this.abi(contract),
        functionName,
        args: [...args],
        value
      } as never)
    )
  }

  /** Sends raw calldata (no ABI) as account `from`; throws if it reverts. */
  async sendRaw(from: number, to: Address, data: Hex, value = 0n): Promise<TransactionReceipt> {
    return this.mined(from, to, data, value)
  }

  async read<T>(contract: string, address: Address, functionName: string, args: ReadonlyArray<unknown> = []): Promise<T> {
    return (await this.public.readContract({ address, abi: this.abi(contract), functionName, args: [...args] })) as T
  }

  /**
   * Sends a transaction (`to` null: a deployment) and answers its receipt (as `send` does), in one
   * request after the node fills the transaction in: `eth_sendRawTransactionSync` (EIP-7966), which anvil
   * answers once it has mined it. Anvil mines a sent transaction in the background, so asking for
   * the receipt right after `eth_sendRawTransaction` found none about two times in three under
   * load, and viem's watch then polled the head every 10 ms: 5,442 `eth_blockNumber` requests in
   * one run of the fixture's 965 transactions. The transaction sent is the same either way (the
   * node fills it in with `eth_fillTransaction`), so the same seed still gives the same blocks.
   * Throws if the node refuses it (the revert reason) or it reverts.
   */
  private async mined(from: number, to: Address | null, data: Hex, value: bigint): Promise<TransactionReceipt> {
    return this.succeeded(this.wallet(from).sendTransactionSync({ to, data, value }))
  }

  /** The receipt of a sent transaction that succeeded; a timeout is explained by what the node knows of it. */
  private async succeeded(sent: Promise<TransactionReceipt>): Promise<TransactionReceipt> {
    let receipt: TransactionReceipt
    try {
      receipt = await sent
    } catch (error) {
      const hash = error instanceof WaitForTransactionReceiptTimeoutError ? /"(0x[0-9a-f]{64})"/.exec(error.message)?.[1] : undefined
      if (hash === undefined) throw error
      // Asked directly: a receipt the node answered late is still a receipt.
      const direct = await this.public.getTransactionReceipt({ hash: hash as Hex }).catch(() => undefined)
      if (direct === undefined) {
        const pool = await this.public.request({ method: "txpool_content" as never }).catch(() => "unavailable")
        const known = await this.public.getTransaction({ hash: hash as Hex }).then(
          (t) => `known, block ${t.blockNumber}, nonce ${t.nonce}`,
          () => "unknown to the node"
        )
        const head = await this.public.getBlockNumber().catch(() => "unavailable")
        throw new Error(`transaction ${hash} not mined in time (${known}; head ${head}); txpool: ${JSON.stringify(pool).slice(0, 2000)}`, {
          cause: error
        })
      }
      receipt = direct
    }
    if (receipt.status !== "success") throw new Error(`transaction ${receipt.transactionHash} reverted`)
    return receipt
  }

  async blockNumber(): Promise<number> {
    return Number(await this.public.getBlockNumber())
  }

  async timestamp(): Promise<number> {
    return Number((await this.public.getBlock()).timestamp)
  }

  /**
   * Jumps the chain's clock `seconds` ahead by mining one empty block at that time (anvil's
   * fixed block step would override a plain evm_increaseTime).
   */
  async advanceTime(seconds: number): Promise<void> {
    const latest = await this.public.getBlock()
    await this.test.setNextBlockTimestamp({ timestamp: latest.timestamp + BigInt(seconds) })
    await this.test.mine({ blocks: 1 })
  }

  async reorg(depth: number): Promise<void> {
    await this.test.request({ method: "anvil_reorg" as never, params: [depth, []] as never })
  }
}
