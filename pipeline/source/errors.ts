/**
 * Typed failures of a chain source, and how a JSON-RPC failure maps onto them.
 *
 * Providers word the same condition differently, so classification is by shape (HTTP status,
 * JSON-RPC code, message patterns), never by one exact message. Which ones are transient (worth
 * the same request again after a pause) is decided here too, in one place.
 */
import { Data } from "effect"

/** 429, or the provider's words for too many requests or compute units. */
export class RateLimited extends Data.TaggedError("RateLimited")<{ readonly message: string }> {}

/**
 * The range or the result set was too large for the provider. `suggested` is the range the
 * provider proposes, when it proposes one; `maxBlocks`, a block-count cap it states.
 */
export class RangeTooLarge extends Data.TaggedError("RangeTooLarge")<{
  readonly message: string
  readonly suggested?: { readonly from: number; readonly to: number }
  readonly maxBlocks?: number
}> {}

export class Timeout extends Data.TaggedError("Timeout")<{ readonly message: string }> {}

/** 5xx, internal errors, unreadable or truncated answers. */
export class ServerError extends Data.TaggedError("ServerError")<{ readonly message: string }> {}

/** The node does not have the block (yet): lagging replica, or a reorged hash. */
export class UnknownBlock extends Data.TaggedError("UnknownBlock")<{ readonly message: string }> {}

/** An answer that contradicts itself or what we hold: a log of another block, missing fields. */
export class InconsistentAnswer extends Data.TaggedError("InconsistentAnswer")<{ readonly message: string }> {}

/** A request the node rejects for a reason retrying cannot fix. */
export class RequestRejected extends Data.TaggedError("RequestRejected")<{ readonly message: string }> {}

/**
 * The node answers a block's logs with none although the block's `logsBloom` says it may hold
 * logs of a watched contract, and neither a second answer nor the block's receipts settle it.
 * The block is not indexed past; asking later may find the logs.
 */
export class LogsWithheld extends Data.TaggedError("LogsWithheld")<{ readonly message: string }> {}

export type ChainError =
  RateLimited | RangeTooLarge | Timeout | ServerError | UnknownBlock | InconsistentAnswer | RequestRejected | LogsWithheld

/** Worth repeating the same request after a pause. RangeTooLarge is not: the range must shrink. */
export const isTransient = (error: ChainError): boolean =>
  error._tag === "RateLimited" ||
  error._tag === "Timeout" ||
  error._tag === "ServerError" ||
  error._tag === "UnknownBlock" ||
  error._tag === "InconsistentAnswer" ||
  error._tag === "LogsWithheld"

const RANGE_PATTERNS: ReadonlyArray<RegExp> = [
  /query returned more than [\d,]+ results/i,
  /log response size exceeded/i,
  /response size (is )?(too large|exceed)/i,
  /block range (is )?(too (large|wide|big)|exceed|limit)/i,
  /range (is )?too (large|wide|big)/i,
  /exceed(s|ed)? (the )?max(imum)? (block )?range/i,
  /limited to a [\d,k]+ (block )?range/i,
  /ranges over [\d,k]+ blocks/i,
  /query exceeds max results/i,
  /too many (results|logs|blocks)/i,
  /max(imum)? (results|logs) (exceeded|reached)/i,
  /(more|larger) than [\d,k]+ (blocks|logs|results)/i,
  /requested too many blocks/i,
  /range limit/i
]

const RATE_PATTERNS: ReadonlyArray<RegExp> = [
  /rate.?limit/i,
  /too many requests/i,
  /exceeded .*(compute units|capacity|throughput|quota)/i,
  /request limit/i,
  /daily (request )?limit/i,
  /throttl/i
]

const UNKNOWN_BLOCK_PATTERNS: ReadonlyArray<RegExp> = [
  /header not found/i,
  /unknown block/i,
  /block not found/i,
  /block .*not (yet )?available/i
]

const parseCount = (text: string): number => {
  const t = text.replace(/,/g, "").toLowerCase()
  return t.endsWith("k") ? Number(t.slice(0, -1)) * 1000 : Number(t)
}

/** The range a provider suggests in its message: `[0xa, 0xb]` or `retry with the range 10-20`. */
const suggestedRange = (message: string) => {
  const hex = /\[\s*(0x[0-9a-f]+)\s*,\s*(0x[0-9a-f]+)\s*\]/i.exec(message)
  if (hex !== null) return { from: Number.parseInt(hex[1]!, 16), to: Number.parseInt(hex[2]!, 16) }
  const dec = /range\s+(\d+)\s*-\s*(\d+)/i.exec(message)
  if (dec !== null) return { from: Number(dec[1]), to: Number(dec[2]) }
  return undefined
}

/** A block-count cap stated in the message ("up to a 2K block range", "max block range: 5000"). */
const statedMaxBlocks = (message: string) => {
  const patterns = [
    /up to a ([\d,]+k?) block range/i,
    /limited to a ([\d,]+k?) (block )?range/i,
    /max(imum)? block range:? ([\d,]+k?)/i,
    /ranges over ([\d,]+k?) blocks/i,
    /([\d,]+k?) block range/i
  ]
  for (const pattern of patterns) {
    const match = pattern.exec(message)
    const group = match
      ?.slice(1)
      .reverse()
      .find((g) => g !== undefined && /\d/.test(g))
    if (group !== undefined) {
      const n = parseCount(group)
      if (Number.isFinite(n) && n > 0) return n
    }
  }
  return undefined
}

export interface RpcFailure {
  readonly httpStatus?: number
  readonly code?: number
  readonly message: string
}

/** Maps one failed JSON-RPC exchange to a ChainError. */
export const classify = ({ httpStatus, code, message }: RpcFailure): ChainError => {
  if (RANGE_PATTERNS.some((p) => p.test(message))) {
    const suggested = suggestedRange(message)
    const maxBlocks = statedMaxBlocks(message)
    return new RangeTooLarge({
      message,
      ...(suggested === undefined ? {} : { suggested }),
      ...(maxBlocks === undefined ? {} : { maxBlocks })
    })
  }
  if (httpStatus === 429 || code === 429 || RATE_PATTERNS.some((p) => p.test(message))) return new RateLimited({ message })
  if (UNKNOWN_BLOCK_PATTERNS.some((p) => p.test(message))) return new UnknownBlock({ message })
  if (httpStatus === 408 || httpStatus === 504 || /time(d)? ?out/i.test(message)) return new Timeout({ message })
  if ((httpStatus !== undefined && httpStatus >= 500) || code === -32603 || code === -32000 || code === -32700) {
    return new ServerError({ message })
  }
  if (httpStatus !== undefined && httpStatus >= 400 && httpStatus !== 400) return new ServerError({ message })
  return new RequestRejected({ message })
}

/** A ChainError as plain data, to cross a thread boundary (structured clone drops the class). */
export type ChainErrorData =
  | { readonly _tag: Exclude<ChainError["_tag"], "RangeTooLarge">; readonly message: string }
  | {
      readonly _tag: "RangeTooLarge"
      readonly message: string
      readonly suggested?: { readonly from: number; readonly to: number }
      readonly maxBlocks?: number
    }

export const chainErrorData = (error: ChainError): ChainErrorData =>
  error._tag === "RangeTooLarge"
    ? {
        _tag: error._tag,
        message: error.message,
        ...(error.suggested === undefined ? {} : { suggested: error.suggested }),
        ...(error.maxBlocks === undefined ? {} : { maxBlocks: error.maxBlocks })
      }
    : { _tag: error._tag, message: error.message }

/** Each ChainError's class, by tag (every one takes its fields without the tag). */
const CHAIN_ERRORS: { readonly [T in ChainError["_tag"]]: new (fields: { readonly message: string }) => ChainError } = {
  RateLimited,
  RangeTooLarge,
  Timeout,
  ServerError,
  UnknownBlock,
  InconsistentAnswer,
  RequestRejected,
  LogsWithheld
}

/** The ChainError `chainErrorData` described. */
export const chainErrorFrom = ({ _tag, ...fields }: ChainErrorData): ChainError => new CHAIN_ERRORS[_tag](fields)
