import COpenSSL
import Foundation
import Synchronization

// Internal wrappers that give every OpenSSL handle a Swift owner which frees it in `deinit`.

/// Drains this thread's OpenSSL error queue into one line (empty if there was nothing queued).
///
/// OpenSSL keeps errors in a per-thread queue; draining it after every failure keeps stale entries
/// from leaking into a later, unrelated call on a reused worker thread.
func drainOpenSSLErrors() -> String {
    var messages: [String] = []
    while true {
        let code = ERR_get_error()
        if code == 0 { break }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        messages.append(String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    return messages.joined(separator: "; ")
}

/// Seconds since 1970 of an `ASN1_TIME`, or `nil` if OpenSSL cannot read it.
func epochSeconds(of time: UnsafePointer<ASN1_TIME>?) -> Int64? {
    guard let time else { return nil }
    var parts = tm()
    guard ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
    return Int64(timegm(&parts))
}

/// One-line rendering of an `X509_NAME` in certificate order with RFC 2253 escaping ("CN=…,O=…,C=US").
func oneLine(name: OpaquePointer?) -> String {
    guard let name, let bio = BIO_new(BIO_s_mem()) else { return "?" }
    defer { BIO_free(bio) }
    guard X509_NAME_print_ex(bio, name, 0, seatledger_XN_FLAG_ONELINE_DER_ORDER()) >= 0 else { return "?" }
    var pointer: UnsafeMutablePointer<CChar>?
    let length = seatledger_BIO_get_mem_data(bio, &pointer)
    guard let pointer, length > 0 else { return "" }
    return String(decoding: UnsafeRawBufferPointer(start: pointer, count: Int(length)), as: UTF8.self)
}

/// A parsed X.509 certificate (`X509*`) owned by Swift.
///
/// Not `Sendable`: instances live only for the duration of one validation (trust anchors are
/// handed to the `X509_STORE`, which holds its own references).
final class X509Certificate {
    let pointer: OpaquePointer
    /// The exact DER bytes the certificate was parsed from.
    let der: Data

    /// Parses exactly one DER certificate; trailing bytes are rejected.
    init(der: Data, role: String) throws(VerificationError) {
        var consumed = 0
        let parsed: OpaquePointer? = der.withUnsafeBytes { raw in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress, raw.count > 0 else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            let certificate = d2i_X509(nil, &cursor, raw.count)
            if let cursor { consumed = cursor - base }
            return certificate
        }
        guard let parsed else {
            let reason = drainOpenSSLErrors()
            throw VerificationError(.badCertificate, "\(role) is not a DER X.509 certificate" + (reason.isEmpty ? "" : " (\(reason))"))
        }
        guard consumed == der.count else {
            X509_free(parsed)
            throw VerificationError(.badCertificate, "\(role) has \(der.count - consumed) bytes after the certificate")
        }
        pointer = parsed
        self.der = der
    }

    deinit { X509_free(pointer) }

    /// One-line subject, e.g. "CN=Prod ECC Mac App Store and iTunes Store Receipt Signing,…".
    var subject: String { oneLine(name: X509_get_subject_name(pointer)) }

    /// Whether it is a CA certificate (basic constraints CA:TRUE, or a v1 self-signed one) whose
    /// issuer is its subject: what a chain can end at.
    var isSelfIssuedCertificateAuthority: Bool {
        X509_check_ca(pointer) != 0 && X509_NAME_cmp(X509_get_subject_name(pointer), X509_get_issuer_name(pointer)) == 0
    }

    /// Start of the validity period, in seconds since 1970.
    var notBefore: Int64? { epochSeconds(of: X509_get0_notBefore(pointer)) }

    /// End of the validity period, in seconds since 1970.
    var notAfter: Int64? { epochSeconds(of: X509_get0_notAfter(pointer)) }

    /// Whether the certificate carries an extension with the dotted OID `oid` (critical or not).
    func hasExtension(oid: String) -> Bool {
        let count = X509_get_ext_count(pointer)
        guard count > 0 else { return false }
        var buffer = [CChar](repeating: 0, count: 128)
        for index in 0..<count {
            guard let extensionObject = X509_EXTENSION_get_object(X509_get_ext(pointer, index)) else { continue }
            let length = OBJ_obj2txt(&buffer, Int32(buffer.count), extensionObject, 1)
            guard length > 0, Int(length) < buffer.count else { continue }
            let text = String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if text == oid { return true }
        }
        return false
    }

    /// The subject public key (a new reference the caller owns through ``PublicKey``).
    func publicKey() -> PublicKey? {
        guard let key = X509_get_pubkey(pointer) else {
            _ = drainOpenSSLErrors()
            return nil
        }
        return PublicKey(owning: key)
    }
}

/// DER encoding of an `X509*` that Swift does not own (e.g. an element of a verified chain).
func derEncoding(ofBorrowed certificate: OpaquePointer) -> Data? {
    let length = i2d_X509(certificate, nil)
    guard length > 0 else { return nil }
    var der = Data(count: Int(length))
    let written: Int32 = der.withUnsafeMutableBytes { raw in
        var cursor = raw.bindMemory(to: UInt8.self).baseAddress
        return i2d_X509(certificate, &cursor)
    }
    return written == length ? der : nil
}

/// A public key (`EVP_PKEY*`) owned by Swift; verifies ES256 signatures.
final class PublicKey: @unchecked Sendable {
    // @unchecked Sendable: the key is never mutated after construction and OpenSSL 3 allows an
    // EVP_PKEY to be used concurrently by many threads for read-only operations such as
    // EVP_PKEY_verify, as long as each call has an EVP_PKEY_CTX of its own: a context is taken
    // out of `verifiers` (under its lock) for exactly one verification at a time.
    let pointer: OpaquePointer
    /// Idle verification contexts for this key, initialised for ES256 (kept so each check skips
    /// OpenSSL's context setup); at most ``maximumIdleVerifiers``. Stored as address bits
    /// because `OpaquePointer` is not `Sendable`; each is owned by whoever took it out.
    private let verifiers = Mutex<[UInt]>([])
    private static let maximumIdleVerifiers = 64

    init(owning pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        verifiers.withLock { idle in for bits in idle { EVP_PKEY_CTX_free(OpaquePointer(bitPattern: bits)) } }
        EVP_PKEY_free(pointer)
    }

    /// An idle verification context, or a new one set up for ECDSA with SHA-256 (`nil` on failure).
    private func takeVerifier() -> OpaquePointer? {
        if let bits = verifiers.withLock({ $0.popLast() }), let idle = OpaquePointer(bitPattern: bits) { return idle }
        guard let context = EVP_PKEY_CTX_new(pointer, nil) else {
            _ = drainOpenSSLErrors()
            return nil
        }
        guard EVP_PKEY_verify_init(context) == 1,
              EVP_PKEY_CTX_set_signature_md(context, SHA256Algorithm.shared.md) == 1 else {
            _ = drainOpenSSLErrors()
            EVP_PKEY_CTX_free(context)
            return nil
        }
        return context
    }

    /// Puts a context back for the next verification (freed when enough are idle).
    private func returnVerifier(_ context: OpaquePointer) {
        let bits = UInt(bitPattern: context)
        let kept = verifiers.withLock { idle -> Bool in
            guard idle.count < Self.maximumIdleVerifiers else { return false }
            idle.append(bits)
            return true
        }
        if !kept { EVP_PKEY_CTX_free(context) }
    }

    /// Whether this is an EC key on P-256 (prime256v1), the only curve ES256 allows.
    var isP256: Bool {
        guard EVP_PKEY_get_base_id(pointer) == EVP_PKEY_EC else { return false }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(pointer, &name, name.count, &length) == 1 else {
            _ = drainOpenSSLErrors()
            return false
        }
        let group = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return group == "prime256v1" || group == "P-256" || group == "secp256r1"
    }

    /// A short description of the key type for error messages.
    var typeDescription: String {
        let bits = EVP_PKEY_get_bits(pointer)
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        if EVP_PKEY_get_group_name(pointer, &name, name.count, &length) == 1 {
            return String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        _ = drainOpenSSLErrors()
        return "\(bits)-bit key of type \(EVP_PKEY_get_base_id(pointer))"
    }

    /// Verifies a raw 64-byte ES256 signature (R‖S) over `message` with SHA-256.
    func verifyES256(signature: Data, message: Data) -> Bool {
        signature.withUnsafeBytes { sig in message.withUnsafeBytes { msg in verifyES256(signature: sig, message: msg) } }
    }

    /// Verifies a raw 64-byte ES256 signature (R‖S) over the bytes of `message` with SHA-256.
    ///
    /// The message is hashed with one-shot `SHA256` and the digest checked with `EVP_PKEY_verify`
    /// (signature digest SHA-256) on a reused context: the same ECDSA check as `EVP_DigestVerify`,
    /// without OpenSSL 3's per-call context setup, which matters because ES256 is three such
    /// checks per notification and dominates ingest.
    func verifyES256(signature: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer) -> Bool {
        guard signature.count == 64 else { return false }
        var digest = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        return withUnsafeMutableBytes(of: &digest) { digestBuffer in
            SHA256Digest.hash(message, into: digestBuffer)
            // OpenSSL's check takes the signature as DER.
            var der = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
            return withUnsafeMutableBytes(of: &der) { derBuffer in
                let derLength = ES256Signature.der(fromRaw: signature, into: derBuffer)
                guard let context = takeVerifier() else { return false }
                let result = EVP_PKEY_verify(context, derBuffer.bindMemory(to: UInt8.self).baseAddress, derLength,
                                             digestBuffer.bindMemory(to: UInt8.self).baseAddress, SHA256Digest.byteCount)
                if result == 1 {
                    returnVerifier(context)
                    return true
                }
                // A context that saw a failure is not reused.
                _ = drainOpenSSLErrors()
                EVP_PKEY_CTX_free(context)
                return false
            }
        }
    }
}

/// Conversion between JOSE's raw R‖S signature form and the DER `ECDSA-Sig-Value` OpenSSL uses.
enum ES256Signature {
    /// The longest DER signature: SEQUENCE header (2) + two INTEGERs of up to 33 bytes with headers (2 × 35).
    static let maximumDERLength = 72

    /// DER `SEQUENCE { r INTEGER, s INTEGER }` from 64 raw bytes, or `nil` if the input is not 64 bytes.
    static func der(fromRaw raw: Data) -> Data? {
        guard raw.count == 64 else { return nil }
        var out = Data(count: maximumDERLength)
        let length = raw.withUnsafeBytes { input in out.withUnsafeMutableBytes { der(fromRaw: input, into: $0) } }
        return out.prefix(length)
    }

    /// Writes the DER form of the 64 raw bytes in `raw` into `out` (at least ``maximumDERLength``
    /// bytes) and returns its length: each half as a minimal positive INTEGER (leading zero bytes
    /// dropped, a zero byte added when the high bit is set), as `i2d_ECDSA_SIG` encodes it.
    static func der(fromRaw raw: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) -> Int {
        precondition(raw.count == 64 && out.count >= maximumDERLength, "ES256 DER conversion needs 64 raw bytes and 72 of room")
        var index = 2
        for half in 0..<2 {
            var first = half * 32
            let end = first + 32
            while first < end - 1, raw[first] == 0 { first += 1 }
            let pad = raw[first] >= 0x80 ? 1 : 0
            let length = end - first + pad
            out[index] = 0x02
            out[index + 1] = UInt8(length)
            index += 2
            if pad == 1 { out[index] = 0; index += 1 }
            for byte in first..<end { out[index] = raw[byte]; index += 1 }
        }
        out[0] = 0x30
        out[1] = UInt8(index - 2)
        return index
    }
}

/// An `X509_STORE` holding only the configured trust anchors.
final class TrustStore: @unchecked Sendable {
    // @unchecked Sendable: the store is filled once in init and never modified afterwards; OpenSSL
    // guards an X509_STORE's internal object cache with its own lock and explicitly supports
    // sharing one store between many concurrent X509_STORE_CTX verifications (as SSL_CTX does).
    let pointer: OpaquePointer

    init(anchors: [TrustAnchor]) throws(VerificationError) {
        guard let store = X509_STORE_new() else {
            throw VerificationError(.chainNotTrusted, "could not allocate an X509_STORE: \(drainOpenSSLErrors())")
        }
        pointer = store
        for anchor in anchors {
            let certificate = try X509Certificate(der: anchor.der, role: "trust anchor \(anchor.subject)")
            // X509_STORE_add_cert takes its own reference; `certificate` frees ours on scope exit.
            guard X509_STORE_add_cert(store, certificate.pointer) == 1 else {
                throw VerificationError(.badCertificate, "could not add trust anchor \(anchor.subject): \(drainOpenSSLErrors())")
            }
        }
    }

    deinit { X509_STORE_free(pointer) }
}

/// PEM helpers shared by ``TrustAnchor/load(contentsOf:)``.
enum PEM {
    /// DER bodies of every `-----BEGIN <label>-----` block in `text`.
    static func blocks(in text: String, label: String) -> [Data]? {
        let begin = "-----BEGIN \(label)-----"
        let end = "-----END \(label)-----"
        var result: [Data] = []
        var rest = Substring(text)
        while let start = rest.range(of: begin) {
            guard let stop = rest.range(of: end, range: start.upperBound..<rest.endIndex) else { return nil }
            let body = rest[start.upperBound..<stop.lowerBound].filter { !$0.isWhitespace }
            guard let der = Data(base64Encoded: String(body)) else { return nil }
            result.append(der)
            rest = rest[stop.upperBound...]
        }
        return result
    }
}
