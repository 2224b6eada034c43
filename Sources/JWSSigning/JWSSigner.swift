import AppStoreModels
import Foundation

/// Produces App Store–style signed payloads: compact JWS, `alg` ES256, certificate chain in `x5c`.
///
/// Used by tests, the simulator and the demo streams with the test PKI from `Tools/pki`.
///
/// ```swift
/// let signer = try JWSSigner.loadTestPKI(directory: repoRoot.appendingPathComponent("Tools/pki"))
/// let jws = try signer.sign(payload: .object(["signedDate": .int(1_735_689_600_000)]))
/// ```
public struct JWSSigner: Sendable {
    /// The key that signs.
    public let signer: ES256Signer
    /// DER certificates placed in `x5c`: leaf, intermediate and optionally root.
    public let certificateChain: [Data]
    /// The encoded protected header, computed once.
    private let encodedHeader: String

    /// Creates a signer whose header is `{"alg":"ES256","x5c":[…]}` with `certificateChain` in base64.
    public init(signer: ES256Signer, certificateChain: [Data]) {
        self.signer = signer
        self.certificateChain = certificateChain
        let header = JSONValue.object([
            "alg": .string("ES256"),
            "x5c": .array(certificateChain.map { .string($0.base64EncodedString()) }),
        ])
        self.encodedHeader = Base64URL.encode(header.canonicalData())
    }

    /// Loads `<prefix>leaf.key`, `<prefix>leaf.pem`, `<prefix>intermediate.pem` and `<prefix>root.pem`.
    ///
    /// When the prefixed intermediate or root does not exist (e.g. prefix `expired-`, whose leaf is
    /// issued by the main intermediate), the unprefixed file is used instead.
    public static func loadTestPKI(directory: URL, prefix: String = "") throws -> JWSSigner {
        func file(_ name: String, fallback: Bool) -> URL {
            let prefixed = directory.appendingPathComponent(prefix + name)
            if fallback, !prefix.isEmpty, !FileManager.default.fileExists(atPath: prefixed.path) {
                return directory.appendingPathComponent(name)
            }
            return prefixed
        }
        let signer = try ES256Signer(contentsOf: file("leaf.key", fallback: false))
        let chain = try [
            certificateDER(at: file("leaf.pem", fallback: false)),
            certificateDER(at: file("intermediate.pem", fallback: true)),
            certificateDER(at: file("root.pem", fallback: true)),
        ]
        return JWSSigner(signer: signer, certificateChain: chain)
    }

    /// Signs the canonical JSON text of `payload`.
    public func sign(payload: JSONValue) throws -> String {
        try sign(payloadBytes: payload.canonicalData())
    }

    /// Signs `payloadBytes` exactly as given.
    public func sign(payloadBytes: Data) throws -> String {
        var out = Array(encodedHeader.utf8)
        out.append(UInt8(ascii: "."))
        payloadBytes.withUnsafeBytes { Base64URL.append($0.bindMemory(to: UInt8.self), to: &out) }
        let signature = try signer.sign(Data(out))
        out.append(UInt8(ascii: "."))
        signature.withUnsafeBytes { Base64URL.append($0.bindMemory(to: UInt8.self), to: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The DER of the first certificate in a PEM or DER file.
    static func certificateDER(at url: URL) throws -> Data {
        let data = try Data(contentsOf: url)
        let text = String(decoding: data, as: UTF8.self)
        guard let begin = text.range(of: "-----BEGIN CERTIFICATE-----") else { return data }
        guard let end = text.range(of: "-----END CERTIFICATE-----", range: begin.upperBound..<text.endIndex),
            let der = Data(base64Encoded: String(text[begin.upperBound..<end.lowerBound].filter { !$0.isWhitespace }))
        else {
            throw SigningError("\(url.lastPathComponent): malformed PEM certificate")
        }
        return der
    }
}

/// ES256-signed JSON Web Tokens (for App Store Server API request authentication).
public enum ES256JWT {
    /// Returns `base64url(header).base64url(claims).base64url(signature)`.
    ///
    /// `header` must be a JSON object; `"alg": "ES256"` is added when absent and any other `alg`
    /// is rejected. Both parts are serialised as canonical JSON (sorted keys).
    public static func make(header: JSONValue, claims: JSONValue, signer: ES256Signer) throws -> String {
        guard var fields = header.objectValue else { throw SigningError("JWT header must be a JSON object") }
        if let alg = fields["alg"] {
            guard alg == .string("ES256") else { throw SigningError("JWT header alg must be ES256, got \(alg.canonicalString())") }
        } else {
            fields["alg"] = .string("ES256")
        }
        let signingInput = Base64URL.encode(JSONValue.object(fields).canonicalData()) + "." + Base64URL.encode(claims.canonicalData())
        let signature = try signer.sign(Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }
}
