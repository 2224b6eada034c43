import COpenSSL
import Foundation

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
    // EVP_DigestVerifyInit/EVP_DigestVerify (each call uses its own EVP_MD_CTX).
    let pointer: OpaquePointer

    init(owning pointer: OpaquePointer) { self.pointer = pointer }

    deinit { EVP_PKEY_free(pointer) }

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
        guard signature.count == 64, let derSignature = ES256Signature.der(fromRaw: signature) else { return false }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, SHA256Algorithm.shared.md, nil, pointer) == 1 else {
            _ = drainOpenSSLErrors()
            return false
        }
        let result = derSignature.withUnsafeBytes { sig in
            message.withUnsafeBytes { msg in
                EVP_DigestVerify(
                    context,
                    sig.bindMemory(to: UInt8.self).baseAddress, sig.count,
                    msg.bindMemory(to: UInt8.self).baseAddress, msg.count)
            }
        }
        if result != 1 { _ = drainOpenSSLErrors() }
        return result == 1
    }
}

/// Conversion between JOSE's raw R‖S signature form and the DER `ECDSA-Sig-Value` OpenSSL uses.
enum ES256Signature {
    /// DER `SEQUENCE { r INTEGER, s INTEGER }` from 64 raw bytes, or `nil` if the input is not 64 bytes.
    static func der(fromRaw raw: Data) -> Data? {
        guard raw.count == 64, let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        let numbers: (OpaquePointer?, OpaquePointer?) = raw.withUnsafeBytes { bytes in
            let base = bytes.bindMemory(to: UInt8.self).baseAddress
            return (BN_bin2bn(base, 32, nil), BN_bin2bn(base.map { $0 + 32 }, 32, nil))
        }
        guard let r = numbers.0, let s = numbers.1 else {
            BN_free(numbers.0)
            BN_free(numbers.1)
            return nil
        }
        // ECDSA_SIG_set0 takes ownership of r and s on success.
        guard ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { return nil }
        var der = Data(count: Int(length))
        let written: Int32 = der.withUnsafeMutableBytes { out in
            var cursor = out.bindMemory(to: UInt8.self).baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        return written == length ? der : nil
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
