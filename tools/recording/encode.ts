/**
 * ABI encoding of event logs from the catalog's ABIs, for generated chains.
 *
 * Static parameters (the overwhelming majority of logs) are written word by word without viem,
 * which keeps a million-event generation in seconds; events with a dynamic non-indexed parameter
 * (strings, arrays, tuples) go through viem's encoder. Hex output is lowercase.
 */
import { encodeAbiParameters, type AbiEvent, type AbiParameter } from "viem"
import { CATALOG, type ContractKind } from "../../schema/catalog.js"

const TWO_256 = 1n << 256n

const isStatic = (type: string) =>
  type === "address" || type === "bool" || /^u?int\d*$/.test(type) || /^bytes([1-9]|[12]\d|3[0-2])$/.test(type)

const word = (type: string, value: unknown): string => {
  if (type === "address") return String(value).slice(2).toLowerCase().padStart(64, "0")
  if (type === "bool") return value ? "1".padStart(64, "0") : "0".repeat(64)
  if (type.startsWith("uint"))
    return BigInt(value as bigint | number)
      .toString(16)
      .padStart(64, "0")
  if (type.startsWith("int")) {
    let v = BigInt(value as bigint | number)
    if (v < 0n) v += TWO_256
    return v.toString(16).padStart(64, "0")
  }
  if (type.startsWith("bytes")) return String(value).slice(2).toLowerCase().padEnd(64, "0")
  throw new Error(`cannot encode ${type} as one word`)
}

export interface EncodedLog {
  readonly topics: ReadonlyArray<string>
  readonly data: string
}

/** Encodes `args` (by parameter name) as a log of `abi` with the given topic0. */
export const encodeLog = (abi: AbiEvent, topic0: string, args: Readonly<Record<string, unknown>>): EncodedLog => {
  const topics = [topic0]
  const dataInputs: Array<AbiParameter> = []
  const dataValues: Array<unknown> = []
  for (const input of abi.inputs) {
    const value = args[input.name ?? ""]
    if (value === undefined) throw new Error(`${abi.name}: missing argument ${input.name}`)
    if (input.indexed) topics.push(`0x${word(input.type, value)}`)
    else {
      dataInputs.push(input)
      dataValues.push(value)
    }
  }
  const data = dataInputs.every((i) => isStatic(i.type))
    ? `0x${dataInputs.map((input, i) => word(input.type, dataValues[i])).join("")}`
    : encodeAbiParameters(dataInputs, dataValues).toLowerCase()
  return { topics, data }
}

/** An encoder for one catalog entry, found by contract kind, event name and variant. */
export const encoderFor = (contract: ContractKind, name: string, variant: "spec" | "deployed" = "spec") => {
  const entry = CATALOG.find((e) => e.contract === contract && e.name === name && e.variant === variant)
  if (entry === undefined) throw new Error(`no ${variant} event ${name} on ${contract} in the catalog`)
  return (args: Readonly<Record<string, unknown>>) => encodeLog(entry.abi, entry.topic0, args)
}
