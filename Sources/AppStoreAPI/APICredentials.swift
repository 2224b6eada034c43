import AppStoreModels
import Foundation
import JWSSigning

/// Why credentials could not be loaded. Messages name files and fields, never key material.
public struct APICredentialsError: Error, Sendable, CustomStringConvertible {
    /// What is missing or wrong.
    public let message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}

/// An App Store Connect API key: issuer id, key id and the `.p8` private key.
///
/// Loaded from (highest precedence first, field by field) explicit values such as command-line
/// flags, environment variables (`SEATLEDGER_ISSUER_ID`, `SEATLEDGER_KEY_ID`,
/// `SEATLEDGER_PRIVATE_KEY_FILE`) and a JSON credentials file:
///
/// ```json
/// {"issuerId": "57246542-96fe-1a63-e053-0824d011072a", "keyId": "2X9R4HXF34",
///  "privateKeyFile": "SubscriptionKey_2X9R4HXF34.p8"}
/// ```
///
/// (`privateKeyFile` relative to the JSON file's folder, or `privateKey` with the PEM text inline).
/// `description` never shows the key.
public struct APICredentials: Sendable, CustomStringConvertible {
    /// The issuer id (`iss`).
    public let issuerId: String
    /// The key id (`kid`).
    public let keyId: String
    /// The signer holding the private key.
    public let signer: ES256Signer
    /// Where the key came from (a file path or "inline in FILE"), for messages.
    public let keySource: String

    /// Environment variable naming the issuer id.
    public static let issuerIdVariable = "SEATLEDGER_ISSUER_ID"
    /// Environment variable naming the key id.
    public static let keyIdVariable = "SEATLEDGER_KEY_ID"
    /// Environment variable naming the `.p8` file.
    public static let privateKeyFileVariable = "SEATLEDGER_PRIVATE_KEY_FILE"

    /// Creates credentials from values already loaded.
    public init(issuerId: String, keyId: String, signer: ES256Signer, keySource: String) {
        self.issuerId = issuerId
        self.keyId = keyId
        self.signer = signer
        self.keySource = keySource
    }

    /// Redacted: issuer and key id only.
    public var description: String { "APICredentials(issuer \(issuerId), key \(keyId), key from \(keySource))" }

    /// Resolves credentials field by field: `explicit` values win, then `environment`, then the
    /// JSON `credentialsFile`.
    ///
    /// - Returns: the credentials and warnings (e.g. a key file readable by group or others).
    public static func resolve(issuerId explicitIssuer: String? = nil, keyId explicitKeyId: String? = nil,
                               privateKeyFile explicitKeyFile: String? = nil,
                               environment: [String: String] = ProcessInfo.processInfo.environment,
                               credentialsFile: String? = nil) throws(APICredentialsError) -> (APICredentials, [String]) {
        var warnings: [String] = []
        var fileValues: [String: JSONValue] = [:]
        var fileDirectory: URL?
        if let credentialsFile {
            let url = URL(fileURLWithPath: credentialsFile)
            guard let data = FileManager.default.contents(atPath: credentialsFile) else {
                throw APICredentialsError("cannot read the credentials file \(credentialsFile)")
            }
            guard let object = (try? JSONValue.parse(data))?.objectValue else {
                throw APICredentialsError("the credentials file \(credentialsFile) is not a JSON object with issuerId, keyId and privateKeyFile")
            }
            fileValues = object
            fileDirectory = url.deletingLastPathComponent()
            if object["privateKey"] != nil, let warning = permissionWarning(path: credentialsFile) { warnings.append(warning) }
        }
        func nonEmpty(_ value: String?) -> String? { value.flatMap { $0.isEmpty ? nil : $0 } }
        let issuer = nonEmpty(explicitIssuer) ?? nonEmpty(environment[issuerIdVariable]) ?? nonEmpty(fileValues["issuerId"]?.stringValue)
        let keyId = nonEmpty(explicitKeyId) ?? nonEmpty(environment[keyIdVariable]) ?? nonEmpty(fileValues["keyId"]?.stringValue)
        var keyPath = nonEmpty(explicitKeyFile) ?? nonEmpty(environment[privateKeyFileVariable])
        var inlinePEM: String?
        if keyPath == nil {
            if let path = nonEmpty(fileValues["privateKeyFile"]?.stringValue) {
                keyPath = path.hasPrefix("/") ? path : (fileDirectory?.appendingPathComponent(path).path ?? path)
            } else if let pem = nonEmpty(fileValues["privateKey"]?.stringValue) {
                inlinePEM = pem
            }
        }
        var missing: [String] = []
        if issuer == nil { missing.append("issuer id (--issuer-id, $\(issuerIdVariable) or issuerId)") }
        if keyId == nil { missing.append("key id (--key-id, $\(keyIdVariable) or keyId)") }
        if keyPath == nil, inlinePEM == nil { missing.append("private key (--private-key FILE, $\(privateKeyFileVariable) or privateKeyFile)") }
        guard let issuer, let keyId, missing.isEmpty else {
            throw APICredentialsError("App Store Server API credentials incomplete: missing \(missing.joined(separator: ", ")); "
                + "give them as flags, environment variables, or a JSON file stored with `seatledger api-config --credentials FILE`")
        }
        let signer: ES256Signer
        let source: String
        if let keyPath {
            guard let data = FileManager.default.contents(atPath: keyPath) else {
                // A key pasted where its path belongs must not be echoed into an error (and a log).
                if keyPath.contains("-----BEGIN") || keyPath.contains("\n") {
                    throw APICredentialsError("the private key file setting holds a key, not a file path: give the path of the .p8 file "
                        + "(the key's text is not printed)")
                }
                throw APICredentialsError("cannot read the private key file \(keyPath)")
            }
            if let warning = permissionWarning(path: keyPath) { warnings.append(warning) }
            do {
                signer = try ES256Signer(privateKeyPEM: String(decoding: data, as: UTF8.self))
            } catch {
                throw APICredentialsError("the private key file \(keyPath) is not an unencrypted P-256 PEM key (.p8): \((error as? SigningError)?.message ?? "\(error)")")
            }
            source = keyPath
        } else {
            do {
                signer = try ES256Signer(privateKeyPEM: inlinePEM ?? "")
            } catch {
                throw APICredentialsError("privateKey in \(credentialsFile ?? "the credentials file") is not an unencrypted P-256 PEM key: \((error as? SigningError)?.message ?? "\(error)")")
            }
            source = "inline in \(credentialsFile ?? "the credentials file")"
        }
        return (APICredentials(issuerId: issuer, keyId: keyId, signer: signer, keySource: source), warnings)
    }

    /// A warning when `path` is readable (or writable) by group or others; `nil` when private (or unknown).
    public static func permissionWarning(path: String) -> String? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue else { return nil }
        guard mode & 0o077 != 0 else { return nil }
        return "warning: \(path) holds an App Store Connect private key and is accessible by group or others "
            + "(mode \(String(mode & 0o777, radix: 8))); run `chmod 600 \(path)`"
    }
}

/// Mints the ES256 bearer tokens the App Store Server API requires and reuses each until shortly
/// before it expires.
///
/// Header `{"alg":"ES256","kid":…,"typ":"JWT"}`; claims `iss`, `iat`, `exp` (at most 60 minutes
/// after `iat`, Apple's limit), `aud` `appstoreconnect-v1`, `bid` (the bundle id). Tokens use the
/// real wall clock, never `$SEATLEDGER_NOW`.
public final class APITokenProvider: Sendable {
    /// Apple's audience claim.
    public static let audience = "appstoreconnect-v1"
    /// Apple's upper bound on a token's lifetime (seconds).
    public static let maximumLifetime: Int64 = 3600

    private let credentials: APICredentials
    private let bundleId: String
    private let lifetime: Int64
    private let clock: @Sendable () -> Date
    private let cache = CachedToken()

    /// Creates a provider.
    ///
    /// - Parameters:
    ///   - lifetime: seconds from `iat` to `exp`; clamped to 60…3600 (default 20 minutes).
    ///   - clock: wall clock (injectable for tests).
    public init(credentials: APICredentials, bundleId: String, lifetime: Int64 = 1200,
                clock: @escaping @Sendable () -> Date = { Date() }) {
        self.credentials = credentials
        self.bundleId = bundleId
        self.lifetime = min(Self.maximumLifetime, max(60, lifetime))
        self.clock = clock
    }

    /// A valid token: the cached one while it has more than a minute left, else a new one.
    public func token() throws -> String {
        let now = Int64(clock().timeIntervalSince1970)
        if let cached = cache.get(), cached.expires - 60 > now { return cached.token }
        let token = try Self.make(credentials: credentials, bundleId: bundleId, issuedAt: now, lifetime: lifetime)
        cache.set((token, now + lifetime))
        return token
    }

    /// One signed token issued at `issuedAt` (epoch seconds).
    public static func make(credentials: APICredentials, bundleId: String, issuedAt: Int64, lifetime: Int64) throws -> String {
        let header: JSONValue = ["alg": "ES256", "kid": .string(credentials.keyId), "typ": "JWT"]
        let claims: JSONValue = [
            "iss": .string(credentials.issuerId), "iat": .int(issuedAt), "exp": .int(issuedAt + min(lifetime, maximumLifetime)),
            "aud": .string(audience), "bid": .string(bundleId),
        ]
        return try ES256JWT.make(header: header, claims: claims, signer: credentials.signer)
    }
}

/// The last token and its expiry, behind a lock.
private final class CachedToken: Sendable {
    private let state = LockedValue<(token: String, expires: Int64)?>(nil)
    func get() -> (token: String, expires: Int64)? { state.get() }
    func set(_ value: (token: String, expires: Int64)) { state.set(value) }
}
