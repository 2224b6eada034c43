import COpenSSL
import Foundation

/// Why signing (or loading signing material) failed.
public struct SigningError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public let message: String

    /// Creates an error with a message.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { "signing failed: \(message)" }
}

/// An ES256 (ECDSA P-256 with SHA-256) signer holding one private key.
///
/// ```swift
/// let signer = try ES256Signer(contentsOf: URL(fileURLWithPath: "Tools/pki/leaf.key"))
/// let signature = try signer.sign(Data("header.payload".utf8))  // 64 bytes, R‖S
/// ```
public final class ES256Signer: Sendable {
    private let key: PrivateKey

    /// Loads a P-256 private key from PEM text (PKCS#8 `PRIVATE KEY` or SEC1 `EC PRIVATE KEY`, unencrypted).
    public init(privateKeyPEM: String) throws {
        let pointer: OpaquePointer? = privateKeyPEM.utf8CString.withUnsafeBufferPointer { text in
            guard let base = text.baseAddress, let bio = BIO_new_mem_buf(base, Int32(text.count - 1)) else { return nil }
            defer { BIO_free(bio) }
            return seatledger_PEM_read_bio_PrivateKey_no_prompt(bio)
        }
        guard let pointer else {
            let reason = drainErrors()
            if privateKeyPEM.contains("ENCRYPTED") {
                throw SigningError("the private key is encrypted (passphrase-protected); give it unencrypted, as App Store Connect's .p8 download is")
            }
            throw SigningError("not a PEM private key (\(reason))")
        }
        let key = PrivateKey(owning: pointer)
        guard EVP_PKEY_get_base_id(pointer) == EVP_PKEY_EC, key.groupName == "prime256v1" else {
            throw SigningError("ES256 needs a P-256 EC key, got \(key.groupName ?? "a non-EC key")")
        }
        self.key = key
    }

    /// Loads a P-256 private key from a PEM file such as `Tools/pki/leaf.key` or an App Store Connect `.p8`.
    public convenience init(contentsOf url: URL) throws {
        let data = try Data(contentsOf: url)
        try self.init(privateKeyPEM: String(decoding: data, as: UTF8.self))
    }

    /// Signs `message` (SHA-256 then ECDSA P-256) and returns the 64-byte JOSE form R‖S.
    public func sign(_ message: Data) throws -> Data {
        guard let context = EVP_MD_CTX_new() else { throw SigningError("could not allocate EVP_MD_CTX") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key.pointer) == 1 else {
            throw SigningError("EVP_DigestSignInit: \(drainErrors())")
        }
        var length = 0
        let bytes = [UInt8](message)
        guard EVP_DigestSign(context, nil, &length, bytes, bytes.count) == 1, length > 0 else {
            throw SigningError("EVP_DigestSign (size): \(drainErrors())")
        }
        var der = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &der, &length, bytes, bytes.count) == 1 else {
            throw SigningError("EVP_DigestSign: \(drainErrors())")
        }
        return try Self.raw(fromDER: Array(der.prefix(length)))
    }

    /// Converts a DER `ECDSA-Sig-Value` to 32-byte big-endian R followed by 32-byte S.
    static func raw(fromDER der: [UInt8]) throws -> Data {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw SigningError("OpenSSL returned an unreadable signature: \(drainErrors())") }
        defer { ECDSA_SIG_free(parsed) }
        var raw = Data(count: 64)
        let ok = raw.withUnsafeMutableBytes { out -> Bool in
            guard let base = out.bindMemory(to: UInt8.self).baseAddress,
                let r = ECDSA_SIG_get0_r(parsed), let s = ECDSA_SIG_get0_s(parsed)
            else { return false }
            return BN_bn2binpad(r, base, 32) == 32 && BN_bn2binpad(s, base + 32, 32) == 32
        }
        guard ok else { throw SigningError("signature component longer than 32 bytes") }
        return raw
    }
}

/// A private key (`EVP_PKEY*`) owned by Swift.
final class PrivateKey: @unchecked Sendable {
    // @unchecked Sendable: the key is never mutated after loading, and OpenSSL 3 allows one
    // EVP_PKEY to be used by many threads at once for signing (each sign uses its own EVP_MD_CTX;
    // nonces come from OpenSSL's thread-safe DRBG).
    let pointer: OpaquePointer

    init(owning pointer: OpaquePointer) { self.pointer = pointer }

    deinit { EVP_PKEY_free(pointer) }

    /// The EC group short name (e.g. "prime256v1"), or `nil` for non-EC keys.
    var groupName: String? {
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(pointer, &name, name.count, &length) == 1 else {
            _ = drainErrors()
            return nil
        }
        return String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Drains this thread's OpenSSL error queue into one line.
func drainErrors() -> String {
    var messages: [String] = []
    while true {
        let code = ERR_get_error()
        if code == 0 { break }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        messages.append(String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    return messages.isEmpty ? "no OpenSSL error" : messages.joined(separator: "; ")
}
