import COpenSSL
import Foundation

/// SHA-256 helpers backed by OpenSSL, used for certificate fingerprints and the event hash chain.
///
/// ```swift
/// SHA256Digest.hex(Data("abc".utf8))  // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/// ```
public enum SHA256Digest {
    /// Number of bytes in a SHA-256 digest.
    public static let byteCount = 32

    /// The 32-byte SHA-256 digest of `data`.
    public static func hash(_ data: Data) -> Data {
        data.withUnsafeBytes { hash($0) }
    }

    /// The 32-byte SHA-256 digest of raw bytes (no copy of the input is made).
    public static func hash(_ bytes: UnsafeRawBufferPointer) -> Data {
        var digest = Data(count: byteCount)
        digest.withUnsafeMutableBytes { out in
            hash(bytes, into: out)
        }
        return digest
    }

    /// Writes the SHA-256 digest of `bytes` into the first 32 bytes of `output` (which must hold at least 32).
    public static func hash(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        precondition(output.count >= byteCount, "SHA256Digest.hash(_:into:) needs a 32-byte output buffer")
        let out = output.bindMemory(to: UInt8.self)
        // `SHA256` rejects a nil input pointer only when the length is non-zero; give it a valid one anyway.
        if let base = bytes.baseAddress, bytes.count > 0 {
            _ = SHA256(base.assumingMemoryBound(to: UInt8.self), bytes.count, out.baseAddress)
        } else {
            var empty: UInt8 = 0
            _ = SHA256(&empty, 0, out.baseAddress)
        }
    }

    /// Lowercase hex of the SHA-256 digest of `data` (64 characters).
    public static func hex(_ data: Data) -> String {
        var digest = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        return withUnsafeMutableBytes(of: &digest) { out in
            data.withUnsafeBytes { hash($0, into: out) }
            return lowercaseHex(UnsafeRawBufferPointer(out))
        }
    }

    /// Lowercase hex of arbitrary bytes (two characters per byte), e.g. to render a stored digest.
    public static func lowercaseHex(_ bytes: Data) -> String {
        bytes.withUnsafeBytes { lowercaseHex($0) }
    }

    /// Lowercase hex of raw bytes (two characters per byte).
    public static func lowercaseHex(_ bytes: UnsafeRawBufferPointer) -> String {
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
            digits.withUTF8Buffer { table in
                var index = 0
                for byte in bytes {
                    buffer[index] = table[Int(byte >> 4)]
                    buffer[index + 1] = table[Int(byte & 0x0F)]
                    index += 2
                }
            }
            return bytes.count * 2
        }
    }
}

/// An incremental SHA-256 computation (for hashing data that arrives in pieces).
///
/// Not thread-safe: use one hasher per task. ``finalize()`` resets it for reuse.
///
/// ```swift
/// let hasher = SHA256Hasher()
/// hasher.update(previousHash)
/// hasher.update(eventBytes)
/// let digest = hasher.finalize()
/// ```
public final class SHA256Hasher {
    private let context: OpaquePointer

    /// Creates a hasher ready to accept input.
    public init() {
        guard let context = EVP_MD_CTX_new() else {
            fatalError("OpenSSL could not allocate an EVP_MD_CTX (out of memory)")
        }
        self.context = context
        reset()
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Discards any input so far and starts a new digest.
    public func reset() {
        guard EVP_DigestInit_ex(context, SHA256Algorithm.shared.md, nil) == 1 else {
            fatalError("OpenSSL could not initialise SHA-256")
        }
    }

    /// Feeds `data` into the digest.
    public func update(_ data: Data) {
        data.withUnsafeBytes { update($0) }
    }

    /// Feeds raw bytes into the digest.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        _ = EVP_DigestUpdate(context, base, bytes.count)
    }

    /// Feeds the UTF-8 bytes of `text` into the digest.
    public func update(_ text: String) {
        var text = text
        text.withUTF8 { update(UnsafeRawBufferPointer($0)) }
    }

    /// Returns the 32-byte digest of everything fed so far and resets the hasher.
    public func finalize() -> Data {
        var digest = Data(count: SHA256Digest.byteCount)
        var length: UInt32 = 0
        digest.withUnsafeMutableBytes { out in
            _ = EVP_DigestFinal_ex(context, out.bindMemory(to: UInt8.self).baseAddress, &length)
        }
        reset()
        return digest
    }

    /// Returns the lowercase hex digest of everything fed so far and resets the hasher.
    public func finalizeHex() -> String {
        SHA256Digest.lowercaseHex(finalize())
    }
}

/// The SHA-256 `EVP_MD`, fetched once so every hasher skips OpenSSL 3's per-init implicit fetch.
final class SHA256Algorithm: @unchecked Sendable {
    // @unchecked Sendable: `md` is set once in init and never mutated; OpenSSL documents fetched
    // EVP_MD objects as safe to share between threads (they are reference counted and immutable).
    let md: OpaquePointer
    private let fetched: Bool

    static let shared = SHA256Algorithm()

    private init() {
        if let fetched = EVP_MD_fetch(nil, "SHA256", nil) {
            md = fetched
            self.fetched = true
        } else {
            // The built-in legacy method object is static; nothing to free.
            guard let builtin = EVP_sha256() else { fatalError("OpenSSL has no SHA-256") }
            md = builtin
            fetched = false
        }
    }

    deinit { if fetched { EVP_MD_free(md) } }
}
