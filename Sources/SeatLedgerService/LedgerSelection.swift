import AppStoreModels
import Foundation
import HTTPServer
import LedgerStorage
import SeatLedger

/// A bearer token that opened a request: its name and the ledgers it opens for the route's scope.
struct TokenGrant: Sendable {
    /// The token's name (the same in every ledger that holds it, as `token add --ledger` stores it).
    let name: String
    /// The ledgers whose token table holds the token, unrevoked, with the route's scope.
    let ledgers: [ServedLedger]
}

extension LedgerService {
    /// The ledger named `name`, if the deployment has one.
    public func ledger(named name: String) -> ServedLedger? { ledgers.first { $0.name == name } }

    /// Checks the `Authorization` header for `scope` in every ledger's token table: the token
    /// opens the ledgers that hold it unrevoked with the scope. 401 when none holds it (503 when
    /// a ledger that might could not be read), 403 when those that hold it lack the scope.
    func authorize(_ header: String?, scope: String) async throws(APIError) -> TokenGrant {
        let presented = try TokenAuthenticator.presentedDigest(header)
        var stored: [(ServedLedger, Result<[APITokenRecord], any Error>)] = []
        for ledger in ledgers {
            do { stored.append((ledger, .success(try await ledger.tokens.records()))) } catch { stored.append((ledger, .failure(error))) }
        }
        return try Self.grant(presented, scope: scope, stored)
    }

    /// ``authorize(_:scope:)`` on the calling thread, which may block for a read of each token table.
    func authorizeBlocking(_ header: String?, scope: String) throws(APIError) -> TokenGrant {
        let presented = try TokenAuthenticator.presentedDigest(header)
        var stored: [(ServedLedger, Result<[APITokenRecord], any Error>)] = []
        for ledger in ledgers {
            do { stored.append((ledger, .success(try ledger.tokens.recordsBlocking()))) } catch { stored.append((ledger, .failure(error))) }
        }
        return try Self.grant(presented, scope: scope, stored)
    }

    private static func grant(_ presented: String, scope: String,
                              _ stored: [(ServedLedger, Result<[APITokenRecord], any Error>)]) throws(APIError) -> TokenGrant {
        var holders: [(ServedLedger, APITokenRecord)] = []
        var unreadable: (any Error)?
        for (ledger, records) in stored {
            switch records {
            case .success(let records):
                if let record = TokenAuthenticator.find(presented, in: records), record.revokedAt == nil { holders.append((ledger, record)) }
            case .failure(let error):
                unreadable = unreadable ?? error
            }
        }
        guard let first = holders.first else {
            if let unreadable { throw TokenAuthenticator.unreadable(unreadable) }
            throw APIError(status: 401, code: "unauthorized", message: "the bearer token is unknown or revoked", headers: TokenAuthenticator.challenge)
        }
        let opened = holders.filter { $0.1.has(scope: scope) }
        guard !opened.isEmpty else {
            throw APIError(status: 403, code: "forbidden", message: "token \(first.1.name) has \(first.1.scopesText); this endpoint needs scope \(scope)")
        }
        return TokenGrant(name: opened[0].1.name, ledgers: opened.map(\.0))
    }

    /// The ledgers a request may read or write: the one its `ledger` parameter names, else every
    /// ledger its token opens (every ledger for a route without a token).
    func candidates(_ match: RouteMatch) throws(APIError) -> [ServedLedger] {
        let opened = match.grant?.ledgers ?? ledgers
        guard let name = match.request.queryValue("ledger") else { return opened }
        guard let named = ledger(named: name) else {
            throw APIError(status: 404, code: "unknown_ledger",
                           message: "this service has no ledger named \(name); it serves " + opened.map(\.name).joined(separator: ", "),
                           details: ["ledgers": .array(opened.map(\.json))])
        }
        guard opened.contains(where: { $0 === named }) else {
            throw APIError(status: 403, code: "forbidden",
                           message: "token \(match.grant?.name ?? "") does not open ledger \(name) (it opens " + opened.map(\.name).joined(separator: ", ")
                               + "); add it there with `seatledger token add NAME --config FILE --ledger \(name)`")
        }
        return [named]
    }

    /// The one ledger a request reads (a page, a feed): its `ledger` parameter, or the only
    /// ledger its token opens; else 400 `ledger_required` naming them.
    func single(_ match: RouteMatch) throws(APIError) -> ServedLedger {
        let candidates = try candidates(match)
        if candidates.count == 1 { return candidates[0] }
        throw APIError(status: 400, code: "ledger_required",
                       message: "\(match.route.template) reads one ledger and this token opens \(candidates.count): add ?ledger= with one of "
                           + candidates.map(\.name).joined(separator: ", "),
                       details: ["ledgers": .array(candidates.map(\.json))])
    }

    /// The ledger a signed input goes to: its `ledger` parameter, or the only candidate, or the
    /// one candidate whose app and environment the body claims; else 400 `ledger_required`.
    func target(_ match: RouteMatch) throws(APIError) -> ServedLedger {
        let candidates = try candidates(match)
        if candidates.count == 1 { return candidates[0] }
        let claims = RoutingClaims.of(match.request.body)
        let fitting = claims.map { claims in candidates.filter { $0.records(claims) } } ?? []
        if fitting.count == 1 { return fitting[0] }
        let what = claims.map { "the body names bundle id \($0.bundleId ?? "(none)") and environment \($0.environment ?? "(none)"), which \(fitting.isEmpty ? "no" : "more than one") ledger of this token records" }
            ?? "the body names no app and environment"
        throw APIError(status: 400, code: "ledger_required",
                       message: "\(what): add ?ledger= with one of " + candidates.map(\.name).joined(separator: ", "),
                       details: ["ledgers": .array(candidates.map(\.json))])
    }

    /// `candidates` split by their ``IdentifierFilter``s: those that may know `identifier` (or
    /// have no opinion yet), then those whose filter says they do not. A search reads the first
    /// group, and the second only when the first knows nothing. A filter behind the pool's head
    /// has no opinion (so this process's acknowledged appends are always searched); another
    /// process's last appends may not be covered yet, so a "no" from every filter is checked
    /// against the stores before a 404.
    func likelyFirst(_ candidates: [ServedLedger], identifier: String) -> [[ServedLedger]] {
        guard candidates.count > 1 else { return [candidates] }
        var likely: [ServedLedger] = [], unlikely: [ServedLedger] = []
        for ledger in candidates {
            if ledger.identifiers.mightContain(identifier, head: ledger.pool.headPosition) == false {
                unlikely.append(ledger)
            } else {
                likely.append(ledger)
            }
        }
        return likely.isEmpty ? [unlikely] : unlikely.isEmpty ? [likely] : [likely, unlikely]
    }

    /// Runs `read` on each candidate ledger (``likelyFirst(_:identifier:)``'s order) and answers
    /// from the one that knows the reference (its answer names it in
    /// ``ServedLedger/answerHeaders``): 404 when none does (503 when a ledger that might could not
    /// answer), 409 `ambiguous_reference` when several do.
    func searching(_ match: RouteMatch, _ read: (ServedLedger) async throws -> HTTPResponse) async throws -> HTTPResponse {
        var tally = SearchTally()
        for group in likelyFirst(try candidates(match), identifier: match.values.first ?? "") where tally.found.isEmpty {
            for ledger in group {
                do { tally.add(ledger, .success(try await read(ledger))) } catch { tally.add(ledger, .failure(error)) }
            }
        }
        return try tally.answer()
    }

    /// ``searching(_:_:)`` on the calling thread.
    func searchingNow(_ match: RouteMatch, _ read: (ServedLedger) throws -> HTTPResponse) throws -> HTTPResponse {
        var tally = SearchTally()
        for group in likelyFirst(try candidates(match), identifier: match.values.first ?? "") where tally.found.isEmpty {
            for ledger in group { tally.add(ledger, Result { try read(ledger) }) }
        }
        return try tally.answer()
    }

    /// `response` with the headers that name `ledger`.
    static func named(_ response: HTTPResponse, by ledger: ServedLedger) -> HTTPResponse {
        var response = response
        response.headers += ledger.answerHeaders
        return response
    }
}

/// What a search across ledgers found: the answers, the last 404 and the last other failure.
struct SearchTally {
    private(set) var found: [(ServedLedger, HTTPResponse)] = []
    private var notFound: APIError?
    private var failure: (any Error)?

    /// One ledger's outcome: an answer, a 404 (it does not know the reference), or a failure.
    mutating func add(_ ledger: ServedLedger, _ result: Result<HTTPResponse, any Error>) {
        switch result {
        case .success(let response): found.append((ledger, response))
        case .failure(let error as APIError) where error.status == 404: notFound = error
        case .failure(let error): failure = error
        }
    }

    /// The one answer, named by its ledger; else the 409, the failure, or the 404.
    func answer() throws -> HTTPResponse {
        if found.count == 1 { return LedgerService.named(found[0].1, by: found[0].0) }
        if found.count > 1 {
            throw APIError(status: 409, code: "ambiguous_reference",
                           message: "the reference is known to \(found.count) ledgers (" + found.map(\.0.name).joined(separator: ", ")
                               + "): add ?ledger= with one of them",
                           details: ["ledgers": .array(found.map(\.0.json))])
        }
        if let failure { throw failure }
        throw notFound ?? APIError(status: 404, code: "not_found", message: "no ledger this token opens knows the reference")
    }
}
