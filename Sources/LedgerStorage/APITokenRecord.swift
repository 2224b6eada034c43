import AppStoreModels

/// One bearer token of `seatledger serve`'s API: its name, scope and SHA-256, never the token.
///
/// Stored in `api_tokens` (an operational table beside the log, like `claim_requests`; never
/// part of the hash chain, never copied by `seatledger copy`).
public struct APITokenRecord: Sendable, Equatable {
    /// The operator's name for it, e.g. `app-server` (unique).
    public let name: String
    /// What it may do: `read` (the `/v1` read API), `seats` (reserved for seat operations) or
    /// `link` (the app server posting StoreKit inputs, `POST /v1/storekit`).
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

    /// The scopes a token may have.
    public static let scopes: Set<String> = ["read", "seats", "link"]
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
