/**
 * Smart-account sign-in on the devnet (anvil, chain id 130): a tiny owner-checked wallet
 * (ERC-1271 `isValidSignature`) deployed from a CREATE2 factory. A deployed wallet signs in
 * through ERC-1271; a wallet not yet deployed signs in through an ERC-6492 wrapped signature (the
 * factory call that would deploy it). Both go through the configured RPC; without one, only
 * account (ECDSA) signatures verify.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createRequire } from "node:module"
import { encodeFunctionData, hashMessage, keccak256, serializeErc6492Signature, toHex, type Abi, type Hex } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { startAnvil, type Anvil } from "../../../tools/devnet/anvil.js"
import { DevnetClient, type Address } from "../../../tools/devnet/client.js"
import { startBackends, type Backends, type Instance } from "./support/auth-harness.js"

const SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// A smart account whose signatures are its owner's ECDSA signatures of the hash (ERC-1271).
contract OwnedWallet {
    address public immutable owner;
    constructor(address owner_) { owner = owner_; }
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        if (signature.length != 65) return 0xffffffff;
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        return ecrecover(hash, v, r, s) == owner ? bytes4(0x1626ba7e) : bytes4(0xffffffff);
    }
}

contract WalletFactory {
    function deploy(address owner, bytes32 salt) external returns (address wallet) {
        wallet = address(new OwnedWallet{salt: salt}(owner));
    }
    function addressOf(address owner, bytes32 salt) external view returns (address) {
        bytes32 code = keccak256(abi.encodePacked(type(OwnedWallet).creationCode, abi.encode(owner)));
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), salt, code)))));
    }
}
`

const compile = () => {
  const solc = createRequire(import.meta.url)("solc") as { compile(input: string): string }
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: "Solidity",
        sources: { "Wallet.sol": { content: SOURCE } },
        settings: {
          optimizer: { enabled: true, runs: 200 },
          evmVersion: "cancun",
          outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } }
        }
      })
    )
  ) as {
    errors?: Array<{ severity: string; formattedMessage: string }>
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>
  }
  const errors = (output.errors ?? []).filter((e) => e.severity === "error")
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join("\n"))
  const contracts = output.contracts["Wallet.sol"]!
  return Object.fromEntries(
    Object.entries(contracts).map(([name, c]) => [name, { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` as Hex }])
  )
}

let anvil: Anvil
let devnet: DevnetClient
let factory: Address
let backends: Backends
let withRpc: Instance
let withoutRpc: Instance

beforeAll(async () => {
  anvil = await startAnvil()
  devnet = new DevnetClient(anvil.url, compile())
  factory = (await devnet.deploy(0, "WalletFactory")).address
  backends = await startBackends()
  withRpc = await backends.start({ auth: { publicUrl: "http://localhost:3000", rpcUrl: anvil.url } })
  withoutRpc = await backends.start()
})

afterAll(async () => {
  await backends?.close()
  await anvil?.stop()
})

/** The owner signs the EIP-191 hash of the message raw: what the wallet's isValidSignature checks. */
const ownerSignature = async (owner: ReturnType<typeof privateKeyToAccount>, message: string) => owner.sign({ hash: hashMessage(message) })

const verify = (instance: Instance, address: string, signature: Hex) =>
  instance.call("POST", "/api/auth/verify", { body: { address, signature } })

describe("smart-account signatures", () => {
  it("a deployed ERC-1271 wallet signs in through the RPC; another owner's signature does not", async () => {
    const owner = privateKeyToAccount(generatePrivateKey())
    const salt = keccak256(toHex("deployed"))
    await devnet.send(0, "WalletFactory", factory, "deploy", [owner.address, salt])
    const wallet = (await devnet.read<Address>("WalletFactory", factory, "addressOf", [owner.address, salt])).toLowerCase()
    expect(await devnet.public.getCode({ address: wallet as Address })).not.toBe(undefined)

    const challenge = await withRpc.call("GET", `/api/auth/challenge?address=${wallet}`)
    const message: string = challenge.body.data.message
    const stranger = privateKeyToAccount(generatePrivateKey())
    const forged = await verify(withRpc, wallet, await ownerSignature(stranger, message))
    expect(forged.status).toBe(401)
    expect(forged.body.message).toMatch(/signature invalid/)

    const answer = await verify(withRpc, wallet, await ownerSignature(owner, message))
    expect(answer.status).toBe(200)
    expect(answer.body.data.address).toBe(wallet)
  })

  it("a wallet not yet deployed signs in with an ERC-6492 signature (the factory call that would deploy it)", async () => {
    const owner = privateKeyToAccount(generatePrivateKey())
    const salt = keccak256(toHex("counterfactual"))
    const wallet = (await devnet.read<Address>("WalletFactory", factory, "addressOf", [owner.address, salt])).toLowerCase()
    expect(await devnet.public.getCode({ address: wallet as Address })).toBe(undefined)
    const challenge = await withRpc.call("GET", `/api/auth/challenge?address=${wallet}`)
    const message: string = challenge.body.data.message
    const signature = serializeErc6492Signature({
      address: factory,
      data: encodeFunctionData({ abi: devnet.abi("WalletFactory"), functionName: "deploy", args: [owner.address, salt] }),
      signature: await ownerSignature(owner, message)
    })
    const answer = await verify(withRpc, wallet, signature)
    expect(answer.status).toBe(200)
    expect(answer.body.data.address).toBe(wallet)
    // Verification simulates the deployment; nothing was deployed.
    expect(await devnet.public.getCode({ address: wallet as Address })).toBe(undefined)
  })

  it("without an RPC only account signatures verify", async () => {
    const owner = privateKeyToAccount(generatePrivateKey())
    const salt = keccak256(toHex("no rpc"))
    await devnet.send(0, "WalletFactory", factory, "deploy", [owner.address, salt])
    const wallet = (await devnet.read<Address>("WalletFactory", factory, "addressOf", [owner.address, salt])).toLowerCase()
    const challenge = await withoutRpc.call("GET", `/api/auth/challenge?address=${wallet}`)
    const answer = await verify(withoutRpc, wallet, await ownerSignature(owner, challenge.body.data.message))
    expect(answer.status).toBe(401)
    expect(answer.body.message).toMatch(/signature invalid/)
  })
})
