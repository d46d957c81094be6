/**
 * Solidity declarations of every catalogued event, generated from `schema/abi.ts`, so the devnet
 * contracts emit exactly the signatures the indexer decodes: one interface per (variant, contract
 * kind), `Spec_<kind>` and `Deployed_<kind>`, emitted as `emit Spec_router.Trade(...)`
 * (qualified event access, solc >= 0.8.21). A deployed variant that shares its name with the
 * spec form lives in the other interface, which is what lets both coexist.
 */
import type { AbiEvent, AbiParameter } from "viem"
import { deployedEvents, specEvents } from "../../schema/abi.js"

/** The only tuple type among the events: EIP-2535's FacetCut, declared once per interface. */
const FACET_CUT = "struct FacetCut { address facetAddress; uint8 action; bytes4[] functionSelectors; }"

const typeOf = (param: AbiParameter): string => {
  if (param.type === "tuple[]") return "FacetCut[]"
  return param.type
}

/** Types passed by reference in an event declaration need no location; only names differ. */
const declare = (event: AbiEvent): string => {
  const params = event.inputs.map((input) => `${typeOf(input)}${input.indexed === true ? " indexed" : ""} ${input.name ?? ""}`.trim())
  return `    event ${event.name}(${params.join(", ")});`
}

const block = (name: string, events: ReadonlyArray<AbiEvent>): string => {
  const needsCut = events.some((e) => e.inputs.some((i) => i.type === "tuple[]"))
  const lines = [`interface ${name} {`]
  if (needsCut) lines.push(`    ${FACET_CUT}`)
  lines.push(...events.map(declare), "}")
  return lines.join("\n")
}

export const eventsSource = (): string => {
  // The header names this file where it used to live (src/devnet/): the text is compiled into every
  // contract's metadata hash, so changing it would change all the bytecode and the committed fixture.
  const parts = [
    "// SPDX-License-Identifier: MIT",
    "// Generated from schema/abi.ts by src/devnet/events-sol.ts; do not edit.",
    "pragma solidity ^0.8.24;",
    ""
  ]
  for (const [kind, events] of Object.entries(specEvents)) {
    parts.push(block(`Spec_${kind}`, Object.values(events) as ReadonlyArray<AbiEvent>), "")
  }
  for (const [kind, events] of Object.entries(deployedEvents)) {
    parts.push(block(`Deployed_${kind}`, Object.values(events) as ReadonlyArray<AbiEvent>), "")
  }
  return parts.join("\n")
}
