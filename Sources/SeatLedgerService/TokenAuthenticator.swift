import Foundation
import JWSVerification
import LedgerStorage
import SeatLedger
import Synchronization

/// Bearer tokens: minting, hashing, reading a request's `Authorization` header, and one
/// ledger's cached token table (``LedgerService`` checks a request against every ledger's).
///
/// A token is `slt_` and 43 characters of base64url (32 random bytes from the system's
/// cryptographic generator). Only its SHA-256 is stored. A presented token is hashed and the
/// digest compared with every stored digest in constant time (no early exit on the first
/// differing byte, no lookup keyed by it), so timing tells nothing about stored tokens. The
/// stored list is re-read at most every ``refreshInterval`` (a revocation takes effect within it).
public final class TokenAuthenticator: Sendable {
    /// How long a read of `api_tokens` is reused.
    public static let refreshInterval: Duration = .seconds(1)
    private let pool: LedgerPool
    private let cache = Mutex<(records: [APITokenRecord], readAt: ContinuousClock.Instant?)>(([], nil))

    /// Creates an authenticator over the pool's `api_tokens`.
    public init(pool: LedgerPool) { self.pool = pool }

    /// A new random token text.
    public static func mintToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let base64 = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return "slt_" + base64
    }

    /// The lowercase hex SHA-256 stored for `token`.
    public static func digest(_ token: String) -> String { SHA256Digest.hex(Data(token.utf8)) }

    /// Whether two equal-length strings are equal, in time independent of where they differ.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in 0..<x.count { difference |= x[index] ^ y[index] }
        return difference == 0
    }

    /// The stored tokens, from the cache while it is fresh (else `nil`).
    private func cachedRecords(at now: ContinuousClock.Instant) -> [APITokenRecord]? {
        cache.withLock { state -> [APITokenRecord]? in
            guard let readAt = state.readAt, now - readAt < Self.refreshInterval else { return nil }
            return state.records
        }
    }

    func records() async throws -> [APITokenRecord] {
        let now = ContinuousClock.now
        if let cached = cachedRecords(at: now) { return cached }
        let fresh = try await pool.read { ledger in try ledger.apiTokens() }
        cache.withLock { $0 = (fresh, now) }
        return fresh
    }

    func recordsBlocking() throws -> [APITokenRecord] {
        let now = ContinuousClock.now
        if let cached = cachedRecords(at: now) { return cached }
        let fresh = try pool.blockingRead { ledger in try ledger.apiTokens() }
        cache.withLock { $0 = (fresh, now) }
        return fresh
    }

    static let challenge = [(name: "WWW-Authenticate", value: "Bearer realm=\"seatledger\"")]

    /// The SHA-256 of the token in a `Bearer` header, or a 401 ``APIError`` naming what is wrong with the header.
    static func presentedDigest(_ header: String?) throws(APIError) -> String {
        guard let header, !header.isEmpty else {
            throw APIError(status: 401, code: "unauthorized", message: "this endpoint needs an Authorization: Bearer <token> header (make one with `seatledger token add NAME --scope read`)", headers: challenge)
        }
        guard header.count > 7, header.prefix(7).lowercased() == "bearer " else {
            throw APIError(status: 401, code: "unauthorized", message: "the Authorization header is not of the form Bearer <token>", headers: challenge)
        }
        return digest(String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces))
    }

    static func unreadable(_ error: any Error) -> APIError {
        APIError(status: 503, code: "ledger_unavailable", message: "cannot read the token table: \(error)", headers: [("Retry-After", "5")])
    }

    /// The stored token whose digest is `presented`, if any (revoked or not), compared with
    /// every one in constant time.
    static func find(_ presented: String, in stored: [APITokenRecord]) -> APITokenRecord? {
        var match: APITokenRecord?
        for record in stored where constantTimeEqual(record.sha256, presented) { match = record }
        return match
    }
}
