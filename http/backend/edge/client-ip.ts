/**
 * The client's IP address: the socket's peer, unless TRUST_PROXY says which proxies in front of
 * the backend may speak for the client through X-Forwarded-For.
 *
 * - a hop count N: the N nearest proxies are trusted; the client is the address N entries from
 *   the right of (X-Forwarded-For + socket peer);
 * - a list of addresses or CIDRs: walking right to left from the socket peer, addresses in the
 *   list are proxies; the first one not in it is the client.
 *
 * Without TRUST_PROXY, X-Forwarded-For is ignored: anyone can write it.
 */
import { Either } from "effect"
import { BlockList, isIP } from "node:net"

export type TrustProxy =
  { readonly _tag: "None" } | { readonly _tag: "Hops"; readonly hops: number } | { readonly _tag: "List"; readonly list: BlockList }

export const noProxy: TrustProxy = { _tag: "None" }

/** IPv4-mapped IPv6 (`::ffff:10.0.0.1`) as the IPv4 address. */
const normal = (address: string): string => {
  const trimmed = address.trim().replace(/^\[|\]$/g, "")
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(trimmed) ? trimmed.slice(7) : trimmed
}

/** Parses TRUST_PROXY: a hop count, or addresses/CIDRs separated by commas. */
export const parseTrustProxy = (text: string): Either.Either<TrustProxy, string> => {
  const value = text.trim()
  if (/^\d+$/.test(value)) {
    const hops = Number(value)
    return hops <= 32 ? Either.right(hops === 0 ? noProxy : { _tag: "Hops", hops }) : Either.left(`hop count ${value} is more than 32`)
  }
  const list = new BlockList()
  for (const item of value
    .split(",")
    .map((i) => i.trim())
    .filter((i) => i !== "")) {
    const [address = "", prefix] = item.split("/")
    const family = isIP(normal(address))
    if (family === 0) return Either.left(`"${item}" is neither a hop count nor an address or CIDR`)
    const type = family === 4 ? "ipv4" : "ipv6"
    if (prefix === undefined) {
      list.addAddress(normal(address), type)
      continue
    }
    const bits = /^\d+$/.test(prefix) ? Number(prefix) : NaN
    if (!(bits >= 0 && bits <= (family === 4 ? 32 : 128))) return Either.left(`"${item}" has an invalid prefix length`)
    list.addSubnet(normal(address), bits, type)
  }
  return Either.right({ _tag: "List", list })
}

const trusted = (list: BlockList, address: string): boolean => {
  const family = isIP(address)
  return family !== 0 && list.check(address, family === 4 ? "ipv4" : "ipv6")
}

/** The client address for a request from `peer` carrying `forwardedFor` (the X-Forwarded-For header). */
export const clientIp = (trust: TrustProxy, peer: string | undefined, forwardedFor: string | undefined): string => {
  const socket = normal(peer ?? "unknown")
  if (trust._tag === "None" || forwardedFor === undefined) return socket
  const forwarded = forwardedFor
    .slice(0, 4_096)
    .split(",")
    .map(normal)
    .filter((a) => isIP(a) !== 0)
  const chain = [...forwarded, socket]
  if (trust._tag === "Hops") return chain[Math.max(0, chain.length - 1 - trust.hops)]!
  let i = chain.length - 1
  while (i > 0 && trusted(trust.list, chain[i]!)) i--
  return chain[i]!
}
