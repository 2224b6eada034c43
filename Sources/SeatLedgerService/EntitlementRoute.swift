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
///
/// Over several ledgers (``LedgerService/candidates(_:)``: a deployment of several apps or
/// environments), the person is looked up in each: the answer of the only ledger that knows
/// them is given as it is (named by its headers); answers from several are merged (every
/// product entry names its app and environment; the top-level `bundleId` and `environment` are
/// those they share, else null).
struct EntitlementRoute: Sendable {
    let service: LedgerService
    let now: @Sendable () -> EpochMillis

    /// The longest `max-age` an answer is given (seconds): news (a refund, a revocation) can end
    /// an entitlement at any moment, so a cached one is at most this old.
    static let maxAge: Int64 = 60

    func answer(_ match: RouteMatch) async throws -> HTTPResponse {
        let read = try prepare(match.path("id"), match.request)
        var tally = Tally()
        for group in service.likelyFirst(try service.candidates(match), identifier: match.path("id")) where tally.found.isEmpty {
            for ledger in group {
                do { try tally.add(ledger, .success(try await ledger.pool.read(read))) } catch { try tally.add(ledger, .failure(error)) }
            }
        }
        return try Self.response(tally.found, missing: tally.missing, ifNoneMatch: match.request.header("If-None-Match"))
    }

    /// ``answer(_:)`` on the calling thread, which may block (``LedgerService/handleImmediately(_:)``).
    func answerNow(_ match: RouteMatch) throws -> HTTPResponse {
        let read = try prepare(match.path("id"), match.request)
        var tally = Tally()
        for group in service.likelyFirst(try service.candidates(match), identifier: match.path("id")) where tally.found.isEmpty {
            for ledger in group { try tally.add(ledger, Result { try ledger.pool.blockingRead(read) }) }
        }
        return try Self.response(tally.found, missing: tally.missing, ifNoneMatch: match.request.header("If-None-Match"))
    }

    /// The answers of the ledgers read so far: a ledger that does not know the person is
    /// remembered; any other failure ends the request (503).
    private struct Tally {
        private(set) var found: [(ServedLedger, EntitlementAnswer)] = []
        private(set) var missing: (any Error)?

        mutating func add(_ ledger: ServedLedger, _ result: Result<EntitlementAnswer, any Error>) throws {
            switch result {
            case .success(let answer): found.append((ledger, answer))
            case .failure(let error as PersonNotFound): missing = error
            case .failure(let error): throw LedgerService.describe(error)
            }
        }
    }

    /// The parameters checked now, the answer made in the read.
    private func prepare(_ identifier: String, _ request: HTTPRequest) throws(APIError) -> @Sendable (Ledger) throws -> EntitlementAnswer {
        let now = now()
        let asOf = try ReadRoutes.clock(request, "asOf", now: now) ?? now
        let knownAt = try ReadRoutes.clock(request, "knownAt", now: now)
        let products = Set(request.queryValues("product"))
        let environment = request.queryValue("environment")
        if let environment, !AppStoreEnvironment.knownValues.contains(environment) {
            throw .badParameter("environment", environment, expected: "one of " + AppStoreEnvironment.knownValues.sorted().joined(separator: ", "))
        }
        return { ledger in
            let whole = try ledger.entitlements(identifier, asOf: asOf, knownAt: knownAt)
            return whole.keeping { entitlement in
                (products.isEmpty || entitlement.productId.map(products.contains) == true)
                    && (environment == nil || environment == whole.environment)
            }
        }
    }

    /// The answer of the ledgers that know the person: 404 when none does.
    private static func response(_ found: [(ServedLedger, EntitlementAnswer)], missing: (any Error)?, ifNoneMatch: String?) throws -> HTTPResponse {
        switch found.count {
        case 0:
            throw LedgerService.describe(missing ?? APIError(status: 404, code: "not_found", message: "no ledger this token opens knows the identifier"))
        case 1:
            return LedgerService.named(response(found[0].1, ifNoneMatch: ifNoneMatch), by: found[0].0)
        default:
            return merged(found.map(\.1), ifNoneMatch: ifNoneMatch)
        }
    }

    /// The 200 (or 304) with its `ETag` and `Cache-Control`.
    static func response(_ answer: EntitlementAnswer, ifNoneMatch: String?) -> HTTPResponse {
        var (body, asOf) = answer.prettyJSONLocatingAsOf()
        body.append(UInt8(ascii: "\n"))
        return response(body: body, asOf: asOf, entitled: answer.entitlements.contains(where: \.entitled),
                        changesAt: answer.changesAt, at: answer.asOf, ifNoneMatch: ifNoneMatch)
    }

    /// Answers of several ledgers as one: the person's identifiers, links and conflicts of all,
    /// every product entry (entitled first, then by product id and environment).
    static func merged(_ answers: [EntitlementAnswer], ifNoneMatch: String?) -> HTTPResponse {
        func unique(_ values: [JSONValue]) -> [JSONValue] {
            var seen: [JSONValue] = []
            for value in values where !seen.contains(value) { seen.append(value) }
            return seen
        }
        let first = answers[0]
        let bundleIds = Set(answers.map(\.bundleId)), environments = Set(answers.map(\.environment))
        let entries = answers.flatMap { answer in answer.entitlements.map { (answer, $0) } }.sorted { a, b in
            if a.1.entitled != b.1.entitled { return a.1.entitled }
            if (a.1.productId ?? "") != (b.1.productId ?? "") { return (a.1.productId ?? "") < (b.1.productId ?? "") }
            return a.0.environment < b.0.environment
        }
        let json: JSONValue = [
            "identifier": .string(first.identifier), "asOf": .timestamp(first.asOf), "knownAt": .timestamp(first.knownAt),
            "bundleId": bundleIds.count == 1 ? .string(first.bundleId) : .null,
            "environment": environments.count == 1 ? .string(first.environment) : .null,
            "person": [
                "userIds": .array(unique(answers.flatMap { $0.userIds.map(JSONValue.string) })),
                "identifiers": .array(unique(answers.flatMap { $0.identifiers.map(JSONValue.string) })),
                "links": .array(unique(answers.flatMap { $0.links.map(\.json) })),
                "conflicts": .array(unique(answers.flatMap { $0.conflicts.map(\.json) })),
            ],
            "entitlements": .array(entries.map { $0.1.json(bundleId: $0.0.bundleId, environment: $0.0.environment) }),
        ]
        let body = Array((json.prettyString() + "\n").utf8)
        // The `asOf` member is the first of the sorted object: its line, break included.
        let marker = Array("\n  \"asOf\": ".utf8)
        var asOf = 0..<0
        if let start = (0...(body.count - marker.count)).first(where: { body[$0..<($0 + marker.count)].elementsEqual(marker) }),
           let end = body[(start + 1)...].firstIndex(of: UInt8(ascii: "\n")) {
            asOf = (start + 1)..<(end + 1)
        }
        return response(body: body, asOf: asOf, entitled: answers.contains { $0.entitlements.contains(where: \.entitled) },
                        changesAt: answers.compactMap(\.changesAt).min(), at: first.asOf, ifNoneMatch: ifNoneMatch)
    }

    /// `body` with its `ETag` (the digest of the body without the `asOf` range) and `Cache-Control`.
    private static func response(body: [UInt8], asOf: Range<Int>, entitled: Bool, changesAt: EpochMillis?, at moment: EpochMillis,
                                 ifNoneMatch: String?) -> HTTPResponse {
        // The digest of what the answer says: the body without its `asOf` member.
        var stable = Array(body[..<asOf.lowerBound])
        stable.append(contentsOf: body[asOf.upperBound...])
        let tag = "\"" + String(SHA256Digest.hex(Data(stable)).prefix(32)) + "\""
        var cache = "no-cache"
        if entitled {
            let left = changesAt.map { max(0, ($0 - moment) / 1000) } ?? maxAge
            cache = "private, max-age=\(min(maxAge, left))"
        }
        let headers = [(name: "ETag", value: tag), (name: "Cache-Control", value: cache)]
        if let ifNoneMatch, ifNoneMatch.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == tag || $0 == "*" }) {
            return HTTPResponse(status: 304, headers: headers)
        }
        return HTTPResponse(status: 200, headers: [(name: "Content-Type", value: "application/json")] + headers, body: Data(body))
    }
}
