import COpenSSL

/// OpenSSL's HMAC `EVP_MAC`, fetched once, with the parameter strings that select SHA-256.
final class HMACAlgorithm: @unchecked Sendable {
    // @unchecked Sendable: every stored property is set once in init and never mutated; OpenSSL
    // documents fetched EVP_MAC objects as safe to share between threads (reference counted,
    // immutable), and the two C strings are only read.
    let mac: OpaquePointer
    /// `"digest"` and `"SHA256"`, owned here so the `OSSL_PARAM`s pointing at them never dangle.
    private let digestKey: UnsafeMutablePointer<CChar>
    private let digestName: UnsafeMutablePointer<CChar>

    /// The shared instance; `nil` when this OpenSSL has no HMAC (a build configured without it).
    static let shared: HMACAlgorithm? = HMACAlgorithm()

    private init?() {
        guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else { return nil }
        guard let digestKey = strdup("digest"), let digestName = strdup("SHA256") else {
            EVP_MAC_free(mac)
            return nil
        }
        self.mac = mac
        self.digestKey = digestKey
        self.digestName = digestName
    }

    deinit {
        EVP_MAC_free(mac)
        free(digestKey)
        free(digestName)
    }

    /// Runs `body` with the `OSSL_PARAM` list `digest=SHA256`.
    func withParameters<Result>(_ body: (UnsafePointer<OSSL_PARAM>) -> Result) -> Result {
        let parameters = [OSSL_PARAM_construct_utf8_string(digestKey, digestName, 0), OSSL_PARAM_construct_end()]
        return parameters.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}

/// One HMAC-SHA256 computation: an `EVP_MAC_CTX` keyed at init, fed with `update`, read once with
/// `finalize`. Owns the context and frees it in `deinit`; not shared between threads.
final class HMACSHA256 {
    /// The length of an HMAC-SHA256 tag in bytes.
    static let tagByteCount = 32

    private let context: OpaquePointer

    /// Keys a new computation with `key`; fails (with OpenSSL's reason) only when OpenSSL cannot
    /// provide HMAC-SHA256 or allocate the context.
    init(key: [UInt8]) throws(WebhookSigningError) {
        guard let algorithm = HMACAlgorithm.shared else { throw .openSSL(operation: "EVP_MAC_fetch(HMAC)", reason: drainOpenSSLErrors()) }
        guard let context = EVP_MAC_CTX_new(algorithm.mac) else {
            throw .openSSL(operation: "EVP_MAC_CTX_new", reason: drainOpenSSLErrors())
        }
        self.context = context
        let initialised = algorithm.withParameters { parameters in
            key.withUnsafeBufferPointer { EVP_MAC_init(context, $0.baseAddress, $0.count, parameters) }
        }
        guard initialised == 1 else { throw .openSSL(operation: "EVP_MAC_init", reason: drainOpenSSLErrors()) }
    }

    deinit { EVP_MAC_CTX_free(context) }

    /// Feeds `bytes` into the tag.
    func update(_ bytes: UnsafeRawBufferPointer) throws(WebhookSigningError) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        guard EVP_MAC_update(context, base.assumingMemoryBound(to: UInt8.self), bytes.count) == 1 else {
            throw .openSSL(operation: "EVP_MAC_update", reason: drainOpenSSLErrors())
        }
    }

    /// Feeds the bytes of `bytes` into the tag.
    func update(_ bytes: [UInt8]) throws(WebhookSigningError) {
        let failure: WebhookSigningError? = bytes.withUnsafeBytes { raw in
            do throws(WebhookSigningError) { try update(raw); return nil } catch { return error }
        }
        if let failure { throw failure }
    }

    /// Returns the 32-byte tag of everything fed so far.
    func finalize() throws(WebhookSigningError) -> [UInt8] {
        var tag = [UInt8](repeating: 0, count: Self.tagByteCount)
        var length = 0
        guard EVP_MAC_final(context, &tag, &length, tag.count) == 1, length == Self.tagByteCount else {
            throw .openSSL(operation: "EVP_MAC_final", reason: drainOpenSSLErrors())
        }
        return tag
    }

    /// HMAC-SHA256 of the concatenation of `parts` under `key`.
    static func tag(key: [UInt8], parts: [[UInt8]]) throws(WebhookSigningError) -> [UInt8] {
        let mac = try HMACSHA256(key: key)
        for part in parts { try mac.update(part) }
        return try mac.finalize()
    }
}

/// SHA-256 of `bytes` (for a secret's fingerprint), through OpenSSL's one-shot `EVP_Digest`.
func sha256(_ bytes: [UInt8]) -> [UInt8] {
    var digest = [UInt8](repeating: 0, count: 32)
    var length: UInt32 = 0
    let ok = bytes.withUnsafeBytes { input in
        EVP_Digest(input.baseAddress, input.count, &digest, &length, EVP_sha256(), nil)
    }
    precondition(ok == 1 && length == 32, "OpenSSL could not compute SHA-256")
    return digest
}

/// Whether `a` and `b` are equal, in time that depends on their lengths only (`CRYPTO_memcmp`).
func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    guard !a.isEmpty else { return true }
    return a.withUnsafeBytes { left in b.withUnsafeBytes { right in CRYPTO_memcmp(left.baseAddress, right.baseAddress, a.count) == 0 } }
}

/// OpenSSL's queued errors as one line (emptying the queue); never includes key material.
func drainOpenSSLErrors() -> String {
    var reasons: [String] = []
    while true {
        let code = ERR_get_error()
        if code == 0 { break }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    return reasons.isEmpty ? "no OpenSSL error queued" : reasons.joined(separator: "; ")
}
