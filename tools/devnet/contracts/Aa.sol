// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// Account abstraction on the live devnet (ERC-4337 v0.7, deployed by `src/devnet/live-state.ts`
/// next to the canonical EntryPoint v0.7 from @account-abstraction/contracts): a smart account
/// owned by an ECDSA key or a WebAuthn P-256 key, its CREATE2 factory, and a verifying paymaster
/// with the deployed protocol's signed hash layout. The TypeScript twins are in schema/aa.ts.

/// ERC-4337 v0.7 user operation, as the EntryPoint passes it.
struct PackedUserOperation {
    address sender;
    uint256 nonce;
    bytes initCode;
    bytes callData;
    bytes32 accountGasLimits;
    uint256 preVerificationGas;
    bytes32 gasFees;
    bytes paymasterAndData;
    bytes signature;
}

/// The part of the EntryPoint v0.7 these contracts call.
interface IEntryPointV7 {
    function depositTo(address account) external payable;
    function addStake(uint32 unstakeDelaySec) external payable;
    function unlockStake() external;
    function withdrawStake(address payable withdrawAddress) external;
    function withdrawTo(address payable withdrawAddress, uint256 withdrawAmount) external;
    function balanceOf(address account) external view returns (uint256);
}

// validationData as the EntryPoint reads it: sigFailed (1 bit of the low 160) | validUntil << 160 | validAfter << 208.
uint256 constant SIG_VALIDATION_FAILED = 1;
uint256 constant SIG_VALIDATION_SUCCESS = 0;

/// secp256k1 and P-256 signature helpers that never revert on a bad signature.
library SignatureCheck {
    /// secp256k1n / 2: a larger s is the malleable twin of a valid signature.
    uint256 internal constant SECP256K1_HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0;
    /// P-256 group order and its half (RIP-7212 accepts both s; we take only the low one).
    uint256 internal constant P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551;
    uint256 internal constant P256_HALF_N = P256_N / 2;
    /// The P256VERIFY precompile (RIP-7212 / EIP-7951; anvil's default hardfork, osaka, has it).
    address internal constant P256_VERIFIER = address(0x100);

    /// The signer of `hash` by a 65-byte r|s|v signature, or address(0) for any malformed or malleable one.
    function recover(bytes32 hash, bytes calldata signature) internal pure returns (address) {
        if (signature.length != 65) return address(0);
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (uint256(s) > SECP256K1_HALF_N || (v != 27 && v != 28)) return address(0);
        return ecrecover(hash, v, r, s);
    }

    /// EIP-191 "\x19Ethereum Signed Message:\n32" hash of a 32-byte hash (viem's signMessage({ raw })).
    function toEthSignedMessageHash(bytes32 hash) internal pure returns (bytes32) {
        return keccak256(abi.encodePacked("\x19Ethereum Signed Message:\n32", hash));
    }

    /// Whether (r, s) signs `digest` for the P-256 key (x, y); low s only.
    function p256(bytes32 digest, uint256 r, uint256 s, uint256 x, uint256 y) internal view returns (bool) {
        if (r == 0 || r >= P256_N || s == 0 || s > P256_HALF_N) return false;
        (bool ok, bytes memory out) = P256_VERIFIER.staticcall(abi.encode(digest, r, s, x, y));
        // The precompile answers 32 bytes of 1 for a valid signature and nothing otherwise.
        return ok && out.length == 32 && abi.decode(out, (uint256)) == 1;
    }
}

/// WebAuthn assertion check (the `navigator.credentials.get` result) for a 32-byte challenge.
library WebAuthn {
    bytes internal constant TYPE_GET = '"type":"webauthn.get"';
    bytes internal constant CHALLENGE_PREFIX = '"challenge":"';
    bytes internal constant B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    /// authenticatorData flags byte: user present.
    bytes1 internal constant FLAG_UP = 0x01;

    /// base64url without padding of 32 bytes: 43 characters.
    function base64Url32(bytes32 value) internal pure returns (bytes memory out) {
        out = new bytes(43);
        uint256 v = uint256(value);
        // 256 bits = 42 full 6-bit groups + 4 bits (padded with two zero bits at the end).
        for (uint256 i = 0; i < 42; i++) {
            out[i] = B64URL[(v >> (250 - 6 * i)) & 63];
        }
        out[42] = B64URL[(v & 15) << 2];
    }

    function startsAt(bytes memory haystack, uint256 at, bytes memory needle) internal pure returns (bool) {
        if (at > haystack.length || haystack.length - at < needle.length) return false;
        for (uint256 i = 0; i < needle.length; i++) {
            if (haystack[at + i] != needle[i]) return false;
        }
        return true;
    }

    /// Whether the assertion (authenticatorData, clientDataJSON, indices, r, s) is the key (x, y)'s
    /// signature of `challenge`: type webauthn.get, the challenge as base64url at `challengeIndex`
    /// and closed by a quote, the user-present flag, and the P-256 signature over
    /// sha256(authenticatorData || sha256(clientDataJSON)).
    function verify(
        bytes32 challenge,
        bytes memory authenticatorData,
        bytes memory clientDataJSON,
        uint256 challengeIndex,
        uint256 typeIndex,
        uint256 r,
        uint256 s,
        uint256 x,
        uint256 y
    ) internal view returns (bool) {
        if (authenticatorData.length < 37 || authenticatorData[32] & FLAG_UP != FLAG_UP) return false;
        if (!startsAt(clientDataJSON, typeIndex, TYPE_GET)) return false;
        bytes memory expected = abi.encodePacked(CHALLENGE_PREFIX, base64Url32(challenge), '"');
        if (!startsAt(clientDataJSON, challengeIndex, expected)) return false;
        bytes32 digest = sha256(abi.encodePacked(authenticatorData, sha256(clientDataJSON)));
        return SignatureCheck.p256(digest, r, s, x, y);
    }
}

/// An ERC-4337 v0.7 account owned by an ECDSA key (20-byte owner) or a WebAuthn P-256 key
/// (64-byte owner abi.encode(x, y)). The owner is fixed at construction (immutables), so the
/// CREATE2 address commits to it. Only the EntryPoint validates and executes.
contract SmartAccount {
    struct Call {
        address target;
        uint256 value;
        bytes data;
    }

    address public immutable entryPoint;
    /// The ECDSA owner, or address(0) for a P-256 account.
    address private immutable ecdsaOwner;
    uint256 private immutable p256X;
    uint256 private immutable p256Y;

    error OnlyEntryPoint();
    error BadOwnerEncoding();

    constructor(address entryPoint_, bytes memory owner_) {
        entryPoint = entryPoint_;
        if (owner_.length == 20) {
            address owner = address(bytes20(owner_));
            if (owner == address(0)) revert BadOwnerEncoding();
            ecdsaOwner = owner;
        } else if (owner_.length == 64) {
            (uint256 x, uint256 y) = abi.decode(owner_, (uint256, uint256));
            if (x == 0 && y == 0) revert BadOwnerEncoding();
            (p256X, p256Y) = (x, y);
        } else {
            revert BadOwnerEncoding();
        }
    }

    receive() external payable {}

    modifier onlyEntryPoint() {
        if (msg.sender != entryPoint) revert OnlyEntryPoint();
        _;
    }

    /// The owner encoding the account was created with (20 bytes ECDSA, 64 bytes P-256).
    function owner() external view returns (bytes memory) {
        return ecdsaOwner != address(0) ? abi.encodePacked(ecdsaOwner) : abi.encode(p256X, p256Y);
    }

    /// ECDSA: 65 bytes over the EIP-191 hash of userOpHash. P-256: a WebAuthn assertion of userOpHash.
    /// A bad signature answers SIG_VALIDATION_FAILED; only a wrong caller reverts.
    function validateUserOp(PackedUserOperation calldata userOp, bytes32 userOpHash, uint256 missingAccountFunds)
        external
        onlyEntryPoint
        returns (uint256 validationData)
    {
        bool valid = ecdsaOwner != address(0)
            ? SignatureCheck.recover(SignatureCheck.toEthSignedMessageHash(userOpHash), userOp.signature) == ecdsaOwner
            : _validWebAuthn(userOpHash, userOp.signature);
        validationData = valid ? SIG_VALIDATION_SUCCESS : SIG_VALIDATION_FAILED;
        if (missingAccountFunds > 0) {
            // The EntryPoint checks the deposit itself; a failed transfer fails validation there.
            (bool paid, ) = payable(msg.sender).call{value: missingAccountFunds}("");
            (paid);
        }
    }

    /// ERC-1271: ECDSA: ecrecover(hash, signature) is the owner (no prefix: the caller hashed).
    /// P-256: a WebAuthn assertion whose challenge is `hash`.
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        bool valid = ecdsaOwner != address(0) ? SignatureCheck.recover(hash, signature) == ecdsaOwner : _validWebAuthn(hash, signature);
        return valid ? bytes4(0x1626ba7e) : bytes4(0xffffffff);
    }

    function execute(address target, uint256 value, bytes calldata data) external onlyEntryPoint {
        _call(target, value, data);
    }

    function executeBatch(Call[] calldata calls) external onlyEntryPoint {
        for (uint256 i = 0; i < calls.length; i++) {
            _call(calls[i].target, calls[i].value, calls[i].data);
        }
    }

    /// A failing call reverts with the callee's own revert data, so callers decode its errors.
    function _call(address target, uint256 value, bytes calldata data) internal {
        (bool ok, bytes memory out) = target.call{value: value}(data);
        if (!ok) {
            assembly {
                revert(add(out, 32), mload(out))
            }
        }
    }

    /// The WebAuthn check behind a self-call, so a malformed encoding is a failed check, never a revert.
    function _validWebAuthn(bytes32 challenge, bytes calldata signature) internal view returns (bool) {
        if (ecdsaOwner != address(0)) return false;
        try this.verifyWebAuthn(challenge, signature) returns (bool valid) {
            return valid;
        } catch {
            return false;
        }
    }

    /// `signature` = abi.encode(bytes authenticatorData, string clientDataJSON, uint256 challengeIndex,
    /// uint256 typeIndex, uint256 r, uint256 s) for this account's P-256 key. Reverts on a malformed encoding.
    function verifyWebAuthn(bytes32 challenge, bytes calldata signature) external view returns (bool) {
        (bytes memory authenticatorData, string memory clientDataJSON, uint256 challengeIndex, uint256 typeIndex, uint256 r, uint256 s) =
            abi.decode(signature, (bytes, string, uint256, uint256, uint256, uint256));
        return WebAuthn.verify(challenge, authenticatorData, bytes(clientDataJSON), challengeIndex, typeIndex, r, s, p256X, p256Y);
    }
}

/// CREATE2 factory: an owner's account address is known before the account exists
/// (counterfactual, the same for the same owner and salt), deployed by its first user operation.
contract SmartAccountFactory {
    event AccountCreated(address indexed account, bytes owner, uint256 salt);

    address public immutable entryPoint;

    constructor(address entryPoint_) {
        entryPoint = entryPoint_;
    }

    function createAccount(bytes calldata owner, uint256 salt) external returns (address account) {
        account = getAddress(owner, salt);
        if (account.code.length > 0) return account;
        new SmartAccount{salt: bytes32(salt)}(entryPoint, owner);
        emit AccountCreated(account, owner, salt);
    }

    function getAddress(bytes calldata owner, uint256 salt) public view returns (address) {
        bytes32 codeHash = keccak256(abi.encodePacked(type(SmartAccount).creationCode, abi.encode(entryPoint, owner)));
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), bytes32(salt), codeHash)))));
    }
}

/// ERC-4337 v0.7 verifying paymaster: sponsors a user operation that carries the signer's
/// EIP-191 signature of `getHash(userOp, validUntil, validAfter)` (the deployed protocol's layout).
/// paymasterAndData = paymaster(20) | verificationGasLimit(16) | postOpGasLimit(16)
///                  | abi.encode(uint48 validUntil, uint48 validAfter)(64) | signature(65).
contract VerifyingPaymaster {
    uint256 private constant GAS_LIMITS_OFFSET = 20;
    uint256 private constant DATA_OFFSET = 52;
    uint256 private constant SIGNATURE_OFFSET = 116;

    IEntryPointV7 public immutable entryPoint;
    address public owner;
    address public verifyingSigner;
    bool public paused;

    event SignerChanged(address indexed previousSigner, address indexed newSigner);
    event Paused(address account);
    event Unpaused(address account);

    error OnlyEntryPoint();
    error OnlyOwner();
    error PaymasterPaused();
    error MalformedPaymasterData(uint256 length);

    constructor(IEntryPointV7 entryPoint_, address owner_, address signer_) {
        entryPoint = entryPoint_;
        owner = owner_;
        verifyingSigner = signer_;
        emit SignerChanged(address(0), signer_);
    }

    modifier onlyOwner() {
        if (msg.sender != owner) revert OnlyOwner();
        _;
    }

    /// keccak256(abi.encode(sender, nonce, keccak256(initCode), keccak256(callData), accountGasLimits,
    /// paymaster gas limits (paymasterAndData[20:52]), preVerificationGas, gasFees, chainid, this,
    /// validUntil, validAfter)): everything but the signatures, bound to this chain and paymaster.
    function getHash(PackedUserOperation calldata userOp, uint48 validUntil, uint48 validAfter) public view returns (bytes32) {
        return keccak256(
            abi.encode(
                userOp.sender,
                userOp.nonce,
                keccak256(userOp.initCode),
                keccak256(userOp.callData),
                userOp.accountGasLimits,
                uint256(bytes32(userOp.paymasterAndData[GAS_LIMITS_OFFSET:DATA_OFFSET])),
                userOp.preVerificationGas,
                userOp.gasFees,
                block.chainid,
                address(this),
                validUntil,
                validAfter
            )
        );
    }

    /// A signature not by the signer answers SIG_VALIDATION_FAILED (with the window); paused or a
    /// paymasterAndData too short to hold the window reverts.
    function validatePaymasterUserOp(PackedUserOperation calldata userOp, bytes32, uint256)
        external
        returns (bytes memory context, uint256 validationData)
    {
        if (msg.sender != address(entryPoint)) revert OnlyEntryPoint();
        if (paused) revert PaymasterPaused();
        bytes calldata data = userOp.paymasterAndData;
        if (data.length < SIGNATURE_OFFSET) revert MalformedPaymasterData(data.length);
        (uint48 validUntil, uint48 validAfter) = abi.decode(data[DATA_OFFSET:SIGNATURE_OFFSET], (uint48, uint48));
        bytes32 hash = SignatureCheck.toEthSignedMessageHash(getHash(userOp, validUntil, validAfter));
        bool valid = SignatureCheck.recover(hash, data[SIGNATURE_OFFSET:]) == verifyingSigner;
        validationData = (valid ? SIG_VALIDATION_SUCCESS : SIG_VALIDATION_FAILED) | (uint256(validUntil) << 160) | (uint256(validAfter) << 208);
        context = "";
    }

    /// Never called (the context is empty); here for the IPaymaster interface.
    function postOp(uint8, bytes calldata, uint256, uint256) external view {
        if (msg.sender != address(entryPoint)) revert OnlyEntryPoint();
    }

    function setSigner(address signer_) external onlyOwner {
        emit SignerChanged(verifyingSigner, signer_);
        verifyingSigner = signer_;
    }

    function pause() external onlyOwner {
        paused = true;
        emit Paused(msg.sender);
    }

    function unpause() external onlyOwner {
        paused = false;
        emit Unpaused(msg.sender);
    }

    function deposit() external payable {
        entryPoint.depositTo{value: msg.value}(address(this));
    }

    function getDeposit() external view returns (uint256) {
        return entryPoint.balanceOf(address(this));
    }

    function withdrawTo(address payable to, uint256 amount) external onlyOwner {
        entryPoint.withdrawTo(to, amount);
    }

    function addStake(uint32 unstakeDelaySec) external payable onlyOwner {
        entryPoint.addStake{value: msg.value}(unstakeDelaySec);
    }

    function unlockStake() external onlyOwner {
        entryPoint.unlockStake();
    }

    function withdrawStake(address payable to) external onlyOwner {
        entryPoint.withdrawStake(to);
    }
}
