import AppStoreModels

/// One bearer token of `seatledger serve`'s API: its name, scopes and SHA-256, never the token.
///
/// Stored in `api_tokens` (an operational table beside the log, like `claim_requests`; never
/// part of the event chain, never copied by `seatledger copy`; the record chain covers its rows:
/// ``RecordChain/apiTokenDigest(_:)``).
///
/// A token carries one or more scopes, stored in the one `scope` column as the scopes sorted and
/// joined with a single space (``storedScope(_:)``): a token of one scope is stored as before
/// several were possible (`read`), so older rows and their record-chain links stay valid.
public struct APITokenRecord: Sendable, Equatable {
    /// The operator's name for it, e.g. `app-server` (unique).
    public let name: String
    /// What it may do, as stored: one scope, or several sorted and joined with a space
    /// (`read record`); ``scopes`` splits it.
    public let scope: String
    /// Lowercase hex SHA-256 of the token text.
    public let sha256: String
    /// When it was added.
    public let createdAt: EpochMillis
    /// When it was revoked, if it was (a revoked token authenticates nothing).
    public let revokedAt: EpochMillis?

    /// Creates a record.
    public init(name: String, scope: String, sha256: String, createdAt: EpochMillis, revokedAt: EpochMillis?) {
        self.name = name
        self.scope = scope
        self.sha256 = sha256
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }

    /// The scopes the token carries (``scope`` split at its spaces).
    public var scopes: [String] { scope.split(separator: " ").map(String.init) }

    /// `scope read`, or `scopes read, record` for several: how messages and listings name them.
    public var scopesText: String {
        let scopes = scopes
        return scopes.count == 1 ? "scope \(scope)" : "scopes \(scopes.joined(separator: ", "))"
    }

    /// Whether the token carries `scope`.
    public func has(scope wanted: String) -> Bool { scopes.contains(wanted) }

    /// The scopes a token may have: `read` (the `/v1` read API), `seats` (the seat operations),
    /// `link` (linking StoreKit transactions) and `record` (recording App Store Server API responses).
    public static let knownScopes: Set<String> = ["link", "read", "record", "seats"]

    /// The `scope` column's text for `scopes` (each one of ``knownScopes``): sorted, each once,
    /// joined with a single space; an ``APITokenError`` naming the first unknown one, or for none.
    public static func storedScope(_ scopes: some Collection<String>) throws(APITokenError) -> String {
        guard !scopes.isEmpty else {
            throw APITokenError("a token needs at least one scope (\(knownScopes.sorted().joined(separator: ", ")))")
        }
        if let unknown = scopes.first(where: { !knownScopes.contains($0) }) {
            throw APITokenError("unknown scope \"\(unknown)\"; a scope is one of \(knownScopes.sorted().joined(separator: ", "))")
        }
        return Set(scopes).sorted().joined(separator: " ")
    }
}

/// Why a token could not be added or revoked.
public struct APITokenError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, naming the token.
    public let message: String
    /// Creates an error.
    public init(_ message: String) { self.message = message }
    /// The text a person reads (what the CLI prints for it).
    public var description: String { message }
}
