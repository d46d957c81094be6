/**
 * A chain for the AA auth and policy tests that need no accounts deployed: anvil with a contract
 * answering both factories' `getAddress`: the passkey factory's `getAddress(bytes owner, uint256 salt)`
 * and SimpleAccountFactory's `getAddress(address owner, uint256 salt)` (a CREATE2-style address of
 * this contract, the salt and the owner's bytes, the same for an EOA either way), placed with
 * anvil_setCode. The backend reads it through the RPC exactly as it reads the devnet's
 * factories. The end-to-end tests use the devnet's real factories.
 */
import { Redacted } from "effect"
import { createRequire } from "node:module"
import { type Address, type Hex } from "viem"
import { generatePrivateKey } from "viem/accounts"
import type { AaOptions } from "../../../../http/backend/aa/config.js"
import { startAnvil, type Anvil } from "../../../../tools/devnet/anvil.js"

const SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
contract AddressFactory {
    function getAddress(bytes calldata owner, uint256 salt) external view returns (address) {
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), bytes32(salt), keccak256(owner))))));
    }
    function getAddress(address owner, uint256 salt) external view returns (address) {
        return this.getAddress(abi.encodePacked(owner), salt);
    }
}`

const runtimeCode = (): Hex => {
  const solc = createRequire(import.meta.url)("solc") as { compile(input: string): string }
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: "Solidity",
        sources: { "AddressFactory.sol": { content: SOURCE } },
        settings: { outputSelection: { "*": { "*": ["evm.deployedBytecode.object"] } } }
      })
    )
  ) as {
    contracts: Record<string, Record<string, { evm: { deployedBytecode: { object: string } } }>>
    errors?: Array<{ severity: string; message: string }>
  }
  const errors = (output.errors ?? []).filter((e) => e.severity === "error")
  if (errors.length > 0) throw new Error(errors.map((e) => e.message).join("\n"))
  return `0x${output.contracts["AddressFactory.sol"]!["AddressFactory"]!.evm.deployedBytecode.object}`
}

export const FACTORY_ADDRESS: Address = "0x00000000000000000000000000000000000fac70"

export const startAddressFactoryChain = async (): Promise<{ anvil: Anvil; factory: Address }> => {
  const anvil = await startAnvil()
  const response = await fetch(anvil.url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_setCode", params: [FACTORY_ADDRESS, runtimeCode()] })
  })
  const answer = (await response.json()) as { error?: unknown }
  if (answer.error !== undefined) throw new Error(`anvil_setCode: ${JSON.stringify(answer.error)}`)
  return { anvil, factory: FACTORY_ADDRESS }
}

/** AA options for a backend on that chain: made-up protocol and paymaster addresses (nothing is sent). */
export const aaOptionsFor = (rpcUrl: string, accountFactory: Address): AaOptions => ({
  rpcUrl,
  chainId: 130,
  entryPoint: "0x0000000071727De22E5E9d8BAf0edAc6f37da032",
  accountFactory,
  ecdsaAccountFactory: accountFactory,
  paymaster: "0x00000000000000000000000000000000000000aa",
  paymasterSignerKey: Redacted.make(generatePrivateKey()),
  bundlerUrl: rpcUrl,
  protocol: {
    router: "0x00000000000000000000000000000000000000b1",
    diamond: "0x00000000000000000000000000000000000000b2",
    exchange: "0x00000000000000000000000000000000000000b3",
    usdc: "0x00000000000000000000000000000000000000b4",
    permit2: "0x000000000022d473030f116ddee9f6b43ac78ba3"
  }
})
