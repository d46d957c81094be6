/**
 * The deployment file: the spec's "Deployed components" table as JSON, every contract address
 * plus `deployBlock`, and optionally the `chainId` it belongs to. The indexer reads it to know
 * which contracts to watch and from which block.
 */
import { Schema } from "effect"
import { Address } from "./primitives.js"

export { COMPONENTS, type Component } from "./components.js"

export const Deployment = Schema.Struct({
  chainId: Schema.optional(Schema.Int.pipe(Schema.positive())),
  diamond: Address,
  router: Address,
  exchange: Address,
  hookProxy: Address,
  marketFactory: Address,
  manualOracle: Address,
  priceFeedOracle: Address,
  timelock: Address,
  paymaster: Address,
  faucet: Address,
  testUsdc: Address,
  poolManager: Address,
  permit2: Address,
  deployBlock: Schema.Int.pipe(Schema.nonNegative()).annotations({ description: "block number of the deployment" })
}).annotations({ identifier: "Deployment", description: "contract addresses of one deployment and its first block" })
export type Deployment = typeof Deployment.Type
