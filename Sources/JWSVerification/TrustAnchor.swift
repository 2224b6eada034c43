import Foundation

/// A root certificate the verifier trusts, e.g. Apple Root CA - G3.
///
/// ```swift
/// let anchors = try TrustAnchor.load(contentsOf: URL(fileURLWithPath: "AppleRootCA-G3.cer"))
/// anchors[0].sha256Fingerprint  // "63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179"
/// ```
public struct TrustAnchor: Sendable, Hashable, CustomStringConvertible {
    /// The certificate's DER encoding.
    public let der: Data
    /// Lowercase hex SHA-256 of ``der``.
    public let sha256Fingerprint: String
    /// One-line subject in certificate order, e.g. "CN=Apple Root CA - G3,OU=…,O=Apple Inc.,C=US".
    public let subject: String
    /// Start of validity, seconds since 1970.
    let notBefore: Int64
    /// End of validity, seconds since 1970.
    let notAfter: Int64
    /// Whether it is a self-issued CA certificate. Chains end only at one: an intermediate or a
    /// leaf configured as a root makes every payload `chain_not_trusted`.
    public let isSelfIssuedCertificateAuthority: Bool

    /// Parses one DER certificate; throws ``VerificationFailure/badCertificate`` if it is not one.
    public init(der: Data) throws(VerificationError) {
        let certificate = try X509Certificate(der: der, role: "trust anchor")
        guard let notBefore = certificate.notBefore, let notAfter = certificate.notAfter else {
            throw VerificationError(.badCertificate, "trust anchor has an unreadable validity period")
        }
        self.der = der
        self.sha256Fingerprint = SHA256Digest.hex(der)
        self.subject = certificate.subject
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.isSelfIssuedCertificateAuthority = certificate.isSelfIssuedCertificateAuthority
    }

    /// Loads every certificate in a DER file or a PEM file (which may hold several certificates).
    public static func load(contentsOf url: URL) throws -> [TrustAnchor] {
        try load(Data(contentsOf: url), named: url.lastPathComponent)
    }

    /// Loads anchors from certificate bytes (DER, or PEM with one or more CERTIFICATE blocks);
    /// `name` identifies them in errors.
    public static func load(_ data: Data, named name: String) throws -> [TrustAnchor] {
        if let text = String(data: data, encoding: .utf8), text.contains("-----BEGIN ") {
            guard let blocks = PEM.blocks(in: text, label: "CERTIFICATE") else {
                throw VerificationError(.badCertificate, "\(name): malformed PEM")
            }
            guard !blocks.isEmpty else {
                throw VerificationError(.badCertificate, "\(name): no CERTIFICATE block")
            }
            return try blocks.map { der throws(VerificationError) in try TrustAnchor(der: der) }
        }
        return [try TrustAnchor(der: data)]
    }

    /// "<subject> (sha256 <fingerprint>)".
    public var description: String { "\(subject) (sha256 \(sha256Fingerprint))" }

    /// Anchors are equal when their DER is.
    public static func == (lhs: TrustAnchor, rhs: TrustAnchor) -> Bool { lhs.der == rhs.der }

    /// Hashes the DER.
    public func hash(into hasher: inout Hasher) { hasher.combine(der) }
}
