/** The contract components of the spec's "Deployed components" table, in its order. */
export const COMPONENTS = [
  "diamond",
  "router",
  "exchange",
  "hookProxy",
  "marketFactory",
  "manualOracle",
  "priceFeedOracle",
  "timelock",
  "paymaster",
  "faucet",
  "testUsdc",
  "poolManager",
  "permit2"
] as const
export type Component = (typeof COMPONENTS)[number]
