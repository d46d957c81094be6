/** The YES price of a market's pool, as the hook computes it (protocol facts, section 2). */
const Q96 = 1n << 96n
const PRICE_UNIT = 1_000_000n

/**
 * The YES price (1e6 scale) of a pool at `sqrtPriceX96`, with the hook's own arithmetic and
 * rounding, so it equals the yesPrice the hook reports after a swap:
 * scaled = floor(floor(sqrtP^2 / 2^96) * 1e6 / 2^96) is USDC per YES when YES is currency0;
 * when YES is currency1 the price is floor(1e12 / scaled) (1 when scaled is 0). Both tokens have
 * 6 decimals, so no decimal shift. Clamped to 1e6, as the hook clamps it.
 */
export const yesPriceFromSqrt = (sqrtPriceX96: bigint, yesIsCurrency0: boolean): bigint => {
  const scaled = (((sqrtPriceX96 * sqrtPriceX96) / Q96) * PRICE_UNIT) / Q96
  const price = yesIsCurrency0 ? scaled : scaled === 0n ? PRICE_UNIT : (PRICE_UNIT * PRICE_UNIT) / scaled
  return price > PRICE_UNIT ? PRICE_UNIT : price
}
