import AppStoreModels
import COpenSSL
import Foundation
import Synchronization

/// Verifies App Store signed payloads (compact JWS, ES256, `x5c` chain) offline against configured roots.
///
/// The rules follow Apple's App Store Server Library with online revocation checks off:
/// `alg` must be `ES256`; `x5c` holds exactly three certificates, leaf, intermediate and root (the
/// root element is ignored — trust comes only from the configured anchors); the chain is validated
/// with OpenSSL at the payload's `signedDate` (which must lie in the years 0000–9999 a certificate
/// can be checked against); the leaf must carry OID 1.2.840.113635.100.6.11.1 and the
/// intermediate 1.2.840.113635.100.6.2.1; the leaf key must be P-256.
///
/// Validated chains are cached (keyed by the leaf and intermediate DER), so verifying many
/// payloads from the same signer costs one signature check each. Safe to call from many threads.
///
/// ```swift
/// let verifier = try SignedPayloadVerifier(trustAnchors: TrustAnchor.load(contentsOf: rootURL))
/// let verified = try verifier.verify(signedPayload)
/// verified.payload["notificationType"]?.stringValue
/// ```
public final class SignedPayloadVerifier: Sendable {
    /// OID Apple puts on App Store receipt-signing leaf certificates.
    public static let appleLeafOID = "1.2.840.113635.100.6.11.1"
    /// OID Apple puts on the WWDR intermediate certificate.
    public static let appleIntermediateOID = "1.2.840.113635.100.6.2.1"
    /// Default bound on the number of cached validated chains.
    public static let defaultCacheCapacity = 1024

    /// The roots this verifier trusts.
    public let trustAnchors: [TrustAnchor]
    private let store: TrustStore
    /// Anchor validity periods keyed by fingerprint.
    private let anchorsByFingerprint: [String: TrustAnchor]
    private let cache: Mutex<ChainCache>
    /// Parsed headers keyed by the SHA-256 of their base64url text: App Store payloads from one
    /// signer share one header (the same x5c), so a hit skips decoding ~2 KB of certificates.
    private let headers: Mutex<HeaderCache>

    /// The header cache: by digest, plus the last header verbatim (a hit needs no hashing).
    private struct HeaderCache: Sendable {
        var byDigest: [Data: ParsedHeader] = [:]
        var last: RecentHeader?
    }

    /// A header's base64url text and what it says.
    private struct RecentHeader: Sendable {
        let text: [UInt8]
        let parsed: ParsedHeader

        /// Whether `other` is exactly this header's text.
        func matches(_ other: UnsafeRawBufferPointer) -> Bool {
            guard other.count == text.count else { return false }
            return text.withUnsafeBytes { mine in
                guard let a = mine.baseAddress, let b = other.baseAddress else { return mine.count == other.count }
                return memcmp(a, b, mine.count) == 0
            }
        }
    }

    /// What a JWS header says, once checked (alg ES256, no crit, x5c of leaf, intermediate and root).
    private struct ParsedHeader: Sendable {
        let header: JSONValue
        let leafText: String
        let intermediateText: String
        let chainKey: Data
    }

    /// Creates a verifier trusting exactly `trustAnchors` (at least one).
    public convenience init(trustAnchors: [TrustAnchor]) throws(VerificationError) {
        try self.init(trustAnchors: trustAnchors, cacheCapacity: Self.defaultCacheCapacity)
    }

    /// Creates a verifier trusting exactly `trustAnchors`, caching up to `cacheCapacity` chains.
    public init(trustAnchors: [TrustAnchor], cacheCapacity: Int) throws(VerificationError) {
        guard !trustAnchors.isEmpty else {
            throw VerificationError(.chainNotTrusted, "no trust anchors configured")
        }
        self.trustAnchors = trustAnchors
        self.store = try TrustStore(anchors: trustAnchors)
        var byFingerprint: [String: TrustAnchor] = [:]
        for anchor in trustAnchors { byFingerprint[anchor.sha256Fingerprint] = anchor }
        self.anchorsByFingerprint = byFingerprint
        self.cache = Mutex(ChainCache(capacity: cacheCapacity))
        self.headers = Mutex(HeaderCache())
    }

    /// Number of validated chains currently cached.
    var cachedChainCount: Int { cache.withLock { $0.count } }

    /// Cache hit and miss counts since creation (for tests and diagnostics).
    var cacheStatistics: (hits: Int, misses: Int) { cache.withLock { ($0.hits, $0.misses) } }

    /// Verifies a compact JWS and returns its decoded header and payload.
    ///
    /// - Parameters:
    ///   - compact: `base64url(header).base64url(payload).base64url(signature)`.
    ///   - dateMember: the payload member (epoch milliseconds) the chain is validated at:
    ///     `signedDate` for notifications, transactions and renewal info; `receiptCreationDate`
    ///     for a signed `AppTransaction`, which Apple's App Store Server Library validates at that
    ///     date (its `AppTransaction.signedDateOptional`).
    ///   - fallbackDate: the validation instant when the payload has no `dateMember`; `nil` refuses
    ///     such a payload (``VerificationFailure/missingSignedDate``) before its chain is looked at.
    /// - Throws: ``VerificationError`` whose ``VerificationError/failure`` says why.
    public func verify(_ compact: String, dateMember: String = "signedDate",
                       fallbackDate: Date? = Date()) throws(VerificationError) -> VerifiedJWS {
        var compact = compact
        // Works on the string's own UTF-8 storage: no copy of the (often 10 KB+) compact text.
        let result = compact.withUTF8 { utf8 in
            Result { () throws(VerificationError) -> VerifiedJWS in
                try verify(utf8: utf8, dateMember: dateMember, fallbackDate: fallbackDate)
            }
        }
        return try result.get()
    }

    private func verify(utf8 bytes: UnsafeBufferPointer<UInt8>, dateMember: String,
                        fallbackDate: Date?) throws(VerificationError) -> VerifiedJWS {
        // 1. Shape: exactly three non-empty base64url parts.
        let (firstDot, secondDot, dotCount) = Self.dotOffsets(bytes)
        guard dotCount == 2 else {
            throw VerificationError(.notJWS, "expected 3 dot-separated parts, found \(dotCount + 1)")
        }
        let headerPart = UnsafeBufferPointer(rebasing: bytes[0..<firstDot])
        let payloadPart = UnsafeBufferPointer(rebasing: bytes[(firstDot + 1)..<secondDot])
        let signaturePart = UnsafeBufferPointer(rebasing: bytes[(secondDot + 1)...])
        guard !headerPart.isEmpty, !payloadPart.isEmpty, !signaturePart.isEmpty else {
            throw VerificationError(.notJWS, "a part is empty")
        }
        guard let payloadBytes = Base64URL.decodeCanonicalBytes(buffer: payloadPart) else {
            throw VerificationError(.notJWS, "payload is not unpadded base64url (RFC 7515: no '=', no stray bits)")
        }
        guard let signature = Base64URL.decodeCanonicalBytes(buffer: signaturePart) else {
            throw VerificationError(.notJWS, "signature is not unpadded base64url (RFC 7515: no '=', no stray bits)")
        }
        let parsedHeader = try header(of: headerPart)
        let header = parsedHeader.header

        // 3. Payload.
        let payload: JSONValue
        do {
            payload = try JSONValue.parse(bytes: payloadBytes)
        } catch {
            throw VerificationError(.malformedPayload, "payload: \(error.reason)")
        }
        guard payload.objectValue != nil else {
            throw VerificationError(.malformedPayload, "payload is not a JSON object")
        }

        // 4. Validation instant: the date member (epoch milliseconds; `signedDate` unless the
        //    caller names another) or the fallback.
        let signedDate: Date?
        let validationSeconds: Int64
        if let signedDateValue = payload[dateMember] {
            guard let milliseconds = signedDateValue.int64Value else {
                throw VerificationError(.malformedPayload, "\(dateMember) is not an integer: \(signedDateValue.canonicalString())")
            }
            signedDate = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            validationSeconds = Self.floorDivide(milliseconds, 1000)
            // Checked before the chain, cached or not, so a cold and a warm process give the same
            // answer (OpenSSL cannot compare a certificate's validity with a time it cannot write as
            // an ASN.1 time, and reported a "format error in certificate's notBefore field"; a cache
            // hit compared the window and said "certificate expired").
            guard Self.certificateTimeRange.contains(validationSeconds) else {
                throw VerificationError(
                    .signedDateOutOfRange,
                    "\(dateMember) \(milliseconds) (epoch milliseconds) is outside 0000-01-01T00:00:00Z...9999-12-31T23:59:59Z, "
                        + "the times a certificate's validity can be checked against")
            }
        } else {
            guard let fallbackDate else {
                throw VerificationError(.missingSignedDate, "the payload has no \(dateMember) to validate its chain at")
            }
            signedDate = nil
            let seconds = fallbackDate.timeIntervalSince1970.rounded(.down)
            guard seconds.isFinite, abs(seconds) < 1e15 else {
                throw VerificationError(.certificateExpired, "fallback date is out of range")
            }
            validationSeconds = Int64(seconds)
        }

        // 5. Chain (cached by the x5c text of leaf+intermediate, so a hit decodes no certificate).
        let chain = try validatedChain(parsedHeader, at: validationSeconds, dateName: signedDate == nil ? "the fallback date" : dateMember)

        // 6. Signature over the ASCII "header.payload", hashed in place.
        guard signature.count == 64 else {
            throw VerificationError(.badSignature, "ES256 signature must be 64 bytes, got \(signature.count)")
        }
        let signingInput = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[0..<secondDot])
        let verified = signature.withUnsafeBytes { chain.leafKey.verifyES256(signature: $0, message: signingInput) }
        guard verified else {
            throw VerificationError(.badSignature, "signature does not verify with the x5c leaf key (\(chain.leafSubject))")
        }

        return VerifiedJWS(
            header: header,
            payload: payload,
            payloadByteArray: payloadBytes,
            signedDate: signedDate,
            rootFingerprint: chain.rootFingerprint,
            intermediateFingerprint: chain.intermediateFingerprint,
            leafFingerprint: chain.leafFingerprint)
    }

    // MARK: - Chain validation

    private static func decodeCertificate(_ value: JSONValue, role: String) throws(VerificationError) -> Data {
        guard case .string(let text) = value else {
            throw VerificationError(.badCertificate, "\(role) is not a string")
        }
        guard !text.isEmpty, let der = Data(base64Encoded: text) else {
            throw VerificationError(.badCertificate, "\(role) is not standard base64")
        }
        return der
    }

    /// The instants (seconds since 1970) a certificate's validity can be compared with: the years
    /// 0000 through 9999 that an X.509 `GeneralizedTime` (RFC 5280 §4.1.2.5.2) can express, and
    /// OpenSSL can write as an ASN.1 time to compare (written out in the rejection's reason).
    static let certificateTimeRange: ClosedRange<Int64> = -62_167_219_200...253_402_300_799

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return (value % divisor != 0 && value < 0) ? quotient - 1 : quotient
    }

    private static func render(_ seconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    /// Offsets of the first two dots and how many dots there are (`memchr` over the UTF-8 bytes).
    private static func dotOffsets(_ bytes: UnsafeBufferPointer<UInt8>) -> (first: Int, second: Int, count: Int) {
        guard let base = bytes.baseAddress else { return (-1, -1, 0) }
        var first = -1, second = -1, count = 0
        var from = 0
        while from < bytes.count, let hit = memchr(base + from, Int32(UInt8(ascii: ".")), bytes.count - from) {
            let index = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            if count == 0 { first = index } else if count == 1 { second = index }
            count += 1
            from = index + 1
        }
        return (first, second, count)
    }

    /// The checked header: from the header cache, or decoded, parsed and checked once.
    ///
    /// The cache is keyed by the SHA-256 of the header text; the last header seen is also kept
    /// verbatim and compared first, since one signer's payloads all share one header.
    private func header(of text: UnsafeBufferPointer<UInt8>) throws(VerificationError) -> ParsedHeader {
        let raw = UnsafeRawBufferPointer(text)
        if let last = headers.withLock({ cache in cache.last.flatMap { $0.matches(raw) ? $0.parsed : nil } }) { return last }
        let digest = SHA256Digest.hash(raw)
        if let cached = headers.withLock({ cache -> ParsedHeader? in
            guard let found = cache.byDigest[digest] else { return nil }
            cache.last = RecentHeader(text: [UInt8](text), parsed: found)
            return found
        }) { return cached }
        guard let headerBytes = Base64URL.decodeCanonicalBytes(buffer: text) else {
            throw VerificationError(.notJWS, "header is not unpadded base64url (RFC 7515: no '=', no stray bits)")
        }
        let header: JSONValue
        do {
            header = try JSONValue.parse(bytes: headerBytes)
        } catch {
            throw VerificationError(.malformedHeader, error.reason)
        }
        guard header.objectValue != nil else {
            throw VerificationError(.malformedHeader, "header is not a JSON object")
        }
        guard let alg = header["alg"] else {
            throw VerificationError(.algNotES256, "header has no alg")
        }
        guard case .string(let algName) = alg, algName == "ES256" else {
            throw VerificationError(.algNotES256, "alg is \(alg.canonicalString())")
        }
        if header["crit"] != nil {
            // RFC 7515 §4.1.11: critical extensions we do not understand must be rejected.
            throw VerificationError(.malformedHeader, "unsupported crit header parameter")
        }
        guard let x5cValue = header["x5c"] else {
            throw VerificationError(.missingX5C, "header has no x5c")
        }
        guard let x5c = x5cValue.arrayValue else {
            throw VerificationError(.missingX5C, "x5c is not an array")
        }
        // Exactly three, as Apple's App Store Server Libraries require (Swift `ChainVerifier`:
        // `x5c_header.count != EXPECTED_CHAIN_LENGTH` (3) is INVALID_JWT_FORMAT; Python, Node, Java
        // and Go: INVALID_CHAIN_LENGTH): App Store signed data always carries leaf, intermediate and
        // root. A two-certificate x5c had been accepted here; nothing Apple signs looks like that.
        guard x5c.count == 3 else {
            throw VerificationError(.invalidChainLength,
                                    "x5c has \(x5c.count) certificate(s); App Store signed data carries exactly three (leaf, intermediate, root)")
        }
        guard case .string(let leafText) = x5c[0], case .string(let intermediateText) = x5c[1] else {
            throw VerificationError(.badCertificate, "x5c entries must be base64 strings")
        }
        // x5c[2] (the root) is deliberately ignored: trust comes only from the configured anchors.
        let hasher = SHA256Hasher()
        hasher.update(leafText)
        hasher.update(".")
        hasher.update(intermediateText)
        let parsed = ParsedHeader(header: header, leafText: leafText, intermediateText: intermediateText, chainKey: hasher.finalize())
        let recent = RecentHeader(text: [UInt8](text), parsed: parsed)
        headers.withLock { cache in
            if cache.byDigest.count >= 1024 { cache.byDigest.removeAll(keepingCapacity: true) }
            cache.byDigest[digest] = parsed
            cache.last = recent
        }
        return parsed
    }

    /// The chain of `parsed`, valid at `seconds` (`dateName` names that instant in a refusal).
    private func validatedChain(_ parsed: ParsedHeader, at seconds: Int64, dateName: String) throws(VerificationError) -> ValidatedChain {
        let key = parsed.chainKey
        let leafText = parsed.leafText, intermediateText = parsed.intermediateText

        if let cached = cache.withLock({ $0.lookup(key) }) {
            guard cached.isValid(at: seconds) else {
                throw VerificationError(
                    .certificateExpired,
                    "\(dateName) \(Self.render(seconds)) is outside the chain's validity "
                        + "\(Self.render(cached.notBefore))..\(Self.render(cached.notAfter)) (x5c leaf \(cached.leafSubject))")
            }
            return cached
        }

        let leafDER = try Self.decodeCertificate(.string(leafText), role: "x5c[0] (leaf)")
        let intermediateDER = try Self.decodeCertificate(.string(intermediateText), role: "x5c[1] (intermediate)")
        let chain = try validateChain(leafDER: leafDER, intermediateDER: intermediateDER, at: seconds, dateName: dateName)
        cache.withLock { $0.insert(chain, for: key) }
        return chain
    }

    /// Full validation with OpenSSL: leaf → intermediate → configured anchor at `seconds`, then Apple OIDs.
    private func validateChain(leafDER: Data, intermediateDER: Data, at seconds: Int64, dateName: String) throws(VerificationError) -> ValidatedChain {
        let leaf = try X509Certificate(der: leafDER, role: "x5c[0] (leaf)")
        let intermediate = try X509Certificate(der: intermediateDER, role: "x5c[1] (intermediate)")
        let leafSubject = leaf.subject

        guard let leafKey = leaf.publicKey() else {
            throw VerificationError(.badCertificate, "leaf public key cannot be read (\(leafSubject))")
        }
        guard leafKey.isP256 else {
            throw VerificationError(.badCertificate, "leaf key is \(leafKey.typeDescription), ES256 requires P-256 (\(leafSubject))")
        }
        guard let leafNotBefore = leaf.notBefore, let leafNotAfter = leaf.notAfter,
            let intermediateNotBefore = intermediate.notBefore, let intermediateNotAfter = intermediate.notAfter
        else {
            throw VerificationError(.badCertificate, "unreadable validity period in x5c")
        }

        guard let context = X509_STORE_CTX_new() else {
            throw VerificationError(.chainNotTrusted, "could not allocate an X509_STORE_CTX: \(drainOpenSSLErrors())")
        }
        defer { X509_STORE_CTX_free(context) }
        guard let untrusted = seatledger_sk_X509_new_null() else {
            throw VerificationError(.chainNotTrusted, "could not allocate a certificate stack")
        }
        // The stack does not own its element: `intermediate` stays alive (and frees it) past this scope.
        defer { seatledger_sk_X509_free(untrusted) }
        guard seatledger_sk_X509_push(untrusted, intermediate.pointer) > 0,
            X509_STORE_CTX_init(context, store.pointer, leaf.pointer, untrusted) == 1
        else {
            throw VerificationError(.chainNotTrusted, "could not set up chain validation: \(drainOpenSSLErrors())")
        }
        // Validate at signedDate. X509_V_FLAG_X509_STRICT stays off (Apple's leaves have no
        // AKI/SKI) and X509_V_FLAG_PARTIAL_CHAIN stays off (the chain must end at an anchor).
        X509_STORE_CTX_set_time(context, 0, time_t(seconds))

        let verified = X509_verify_cert(context)
        if verified != 1 {
            let code = X509_STORE_CTX_get_error(context)
            let depth = X509_STORE_CTX_get_error_depth(context)
            let reason = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "error \(code)"
            let culprit = X509_STORE_CTX_get_current_cert(context).map { oneLine(name: X509_get_subject_name($0)) }
            _ = drainOpenSSLErrors()
            let where_ = culprit.map { " at depth \(depth) (\($0))" } ?? ""
            if code == X509_V_ERR_CERT_HAS_EXPIRED || code == X509_V_ERR_CERT_NOT_YET_VALID {
                throw VerificationError(
                    .certificateExpired, "\(reason)\(where_) at \(dateName) \(Self.render(seconds)) (x5c leaf \(leafSubject))")
            }
            throw VerificationError(.chainNotTrusted, "\(reason)\(where_) (x5c leaf \(leafSubject))")
        }

        // The built chain must be exactly leaf → x5c[1] → configured anchor.
        guard let built = X509_STORE_CTX_get0_chain(context), seatledger_sk_X509_num(built) == 3,
            let middle = seatledger_sk_X509_value(built, 1), let top = seatledger_sk_X509_value(built, 2),
            derEncoding(ofBorrowed: middle) == intermediateDER,
            let topDER = derEncoding(ofBorrowed: top),
            let anchor = anchorsByFingerprint[SHA256Digest.hex(topDER)]
        else {
            throw VerificationError(.chainNotTrusted, "chain does not run x5c leaf → x5c intermediate → configured anchor (x5c leaf \(leafSubject))")
        }

        guard leaf.hasExtension(oid: Self.appleLeafOID) else {
            throw VerificationError(.missingAppleOID, "leaf lacks \(Self.appleLeafOID) (\(leafSubject))")
        }
        guard intermediate.hasExtension(oid: Self.appleIntermediateOID) else {
            throw VerificationError(.missingAppleOID, "intermediate lacks \(Self.appleIntermediateOID) (\(intermediate.subject))")
        }

        return ValidatedChain(
            leafKey: leafKey,
            notBefore: max(leafNotBefore, intermediateNotBefore, anchor.notBefore),
            notAfter: min(leafNotAfter, intermediateNotAfter, anchor.notAfter),
            rootFingerprint: anchor.sha256Fingerprint,
            intermediateFingerprint: SHA256Digest.hex(intermediateDER),
            leafFingerprint: SHA256Digest.hex(leafDER),
            leafSubject: leafSubject)
    }
}
