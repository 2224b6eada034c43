import AppStoreModels
import Foundation
import HTTPServer
import JWSVerification
import Projections
import SeatLedger

/// `GET /v1/entitlements/{id}`: a person's entitlements per product (``Ledger/entitlements(_:asOf:knownAt:)``),
/// filtered by `product` and `environment`, with caching headers an app server can trust.
///
/// - `ETag`: a digest of the answer without its `asOf` (which moves with the clock), so it
///   changes exactly when what the answer says does; `If-None-Match` with it is a 304.
/// - `Cache-Control`: `private, max-age=N` only while the person is entitled, with `N` never
///   past the earliest end of an entitled source (and at most ``maxAge``); `no-cache` otherwise,
///   so a purchase made a moment ago is never hidden by a cached "not entitled".
struct EntitlementRoute: Sendable {
    let pool: LedgerPool
    let now: @Sendable () -> EpochMillis

    /// The longest `max-age` an answer is given (seconds): news (a refund, a revocation) can end
    /// an entitlement at any moment, so a cached one is at most this old.
    static let maxAge: Int64 = 60

    func answer(_ identifier: String, _ request: HTTPRequest) async throws -> HTTPResponse {
        let read = try prepare(identifier, request)
        do { return try await pool.read(read) } catch { throw LedgerService.describe(error) }
    }

    /// ``answer(_:_:)`` on the calling thread, which may block (``LedgerService/handleImmediately(_:)``).
    func answerNow(_ identifier: String, _ request: HTTPRequest) throws -> HTTPResponse {
        let read = try prepare(identifier, request)
        do { return try pool.blockingRead(read) } catch { throw LedgerService.describe(error) }
    }

    /// The parameters checked now, the answer made in the read.
    private func prepare(_ identifier: String, _ request: HTTPRequest) throws(APIError) -> @Sendable (Ledger) throws -> HTTPResponse {
        let now = now()
        let asOf = try ReadRoutes.clock(request, "asOf", now: now) ?? now
        let knownAt = try ReadRoutes.clock(request, "knownAt", now: now)
        let products = Set(request.queryValues("product"))
        let environment = request.queryValue("environment")
        if let environment, !AppStoreEnvironment.knownValues.contains(environment) {
            throw .badParameter("environment", environment, expected: "one of " + AppStoreEnvironment.knownValues.sorted().joined(separator: ", "))
        }
        let presented = request.header("If-None-Match")
        return { ledger in
            let whole = try ledger.entitlements(identifier, asOf: asOf, knownAt: knownAt)
            let answer = whole.keeping { entitlement in
                (products.isEmpty || entitlement.productId.map(products.contains) == true)
                    && (environment == nil || environment == whole.environment)
            }
            return Self.response(answer, ifNoneMatch: presented)
        }
    }

    /// The 200 (or 304) with its `ETag` and `Cache-Control`.
    static func response(_ answer: EntitlementAnswer, ifNoneMatch: String?) -> HTTPResponse {
        var (body, asOf) = answer.prettyJSONLocatingAsOf()
        body.append(UInt8(ascii: "\n"))
        // The digest of what the answer says: the body without its `asOf` member.
        var stable = Array(body[..<asOf.lowerBound])
        stable.append(contentsOf: body[asOf.upperBound...])
        let tag = "\"" + String(SHA256Digest.hex(Data(stable)).prefix(32)) + "\""
        var cache = "no-cache"
        if answer.entitlements.contains(where: \.entitled) {
            let left = answer.changesAt.map { max(0, ($0 - answer.asOf) / 1000) } ?? maxAge
            cache = "private, max-age=\(min(maxAge, left))"
        }
        let headers = [(name: "ETag", value: tag), (name: "Cache-Control", value: cache)]
        if let ifNoneMatch, ifNoneMatch.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == tag || $0 == "*" }) {
            return HTTPResponse(status: 304, headers: headers)
        }
        return HTTPResponse(status: 200, headers: [(name: "Content-Type", value: "application/json")] + headers, body: Data(body))
    }
}
