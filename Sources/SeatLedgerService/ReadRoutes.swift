import AppStoreModels
import Foundation
import HTTPServer
import LedgerStorage
import Projections
import Reports
import SeatLedger

/// The `/v1` read API. Every JSON body is the CLI's `--json` output for the same ledger and
/// clocks (the same library functions render both), pretty-printed the same way.
struct ReadRoutes: Sendable {
    let pool: LedgerPool
    let now: @Sendable () -> EpochMillis
    let maxPageSize: Int
    let maxChangeWait: Duration

    /// A clock parameter (`asOf`, `knownAt`, `from`, `to`), read with the CLI's rule
    /// (``MomentText``): ISO 8601, epoch milliseconds, `now` or relative to `now` (`7d`, `+2h`).
    static func clock(_ request: HTTPRequest, _ name: String, now: EpochMillis) throws(APIError) -> EpochMillis? {
        // Given once: ``RouteParameters`` refused a second one.
        guard let text = request.queryValue(name) else { return nil }
        return try moment(name, text, now: now)
    }

    /// `text` as the moment a client asks about, by ``MomentText``'s rule; a refused form (epoch
    /// seconds, a compact date, …) is a 400 `bad_parameter` naming it and, in `didYouMean`, the
    /// ISO 8601 form it probably meant.
    static func moment(_ name: String, _ text: String, now: EpochMillis) throws(APIError) -> EpochMillis {
        do {
            return try MomentText.parse(text, now: now)
        } catch {
            var details: [String: JSONValue] = ["parameter": .string(name), "value": .string(text)]
            if let meant = error.meant { details["didYouMean"] = .string(meant) }
            throw APIError(status: 400, code: "bad_parameter", message: error.message(queryParameter: name), details: details)
        }
    }

    /// Every value of a clock parameter a route takes more than once (`diff`'s `asOf`, `knownAt`).
    static func clocks(_ request: HTTPRequest, _ name: String, now: EpochMillis) throws(APIError) -> [EpochMillis] {
        var result: [EpochMillis] = []
        for text in request.queryValues(name) { result.append(try moment(name, text, now: now)) }
        return result
    }

    static func integer(_ request: HTTPRequest, _ name: String, range: ClosedRange<Int64>) throws(APIError) -> Int64? {
        guard let text = request.queryValue(name) else { return nil }
        guard let value = Int64(text), range.contains(value) else {
            throw .badParameter(name, text, expected: "an integer in \(range.lowerBound)…\(range.upperBound)")
        }
        return value
    }

    private func reading<T: Sendable>(_ body: @escaping @Sendable (Ledger) throws -> T) async throws -> T {
        do { return try await pool.read(body) } catch { throw LedgerService.describe(error) }
    }

    /// Runs `read` on the calling thread (``LedgerPool/blockingRead(_:)``), errors as answers.
    func readingNow<T>(_ read: (Ledger) throws -> T) throws -> T {
        do { return try pool.blockingRead(read) } catch { throw LedgerService.describe(error) }
    }

    /// `GET /v1/members/{id}` of one ledger: `{"identifier", "hasAccess", "memberships": <member show --json>}`.
    func member(_ identifier: String, _ request: HTTPRequest) async throws -> HTTPResponse {
        Self.memberAnswer(identifier, try await reading(try membershipsRead(identifier, request)))
    }

    /// ``member(_:_:)`` on the calling thread, which may block (``LedgerService/handleImmediately(_:)``).
    func memberNow(_ identifier: String, _ request: HTTPRequest) throws -> HTTPResponse {
        Self.memberAnswer(identifier, try readingNow(try membershipsRead(identifier, request)))
    }

    /// The member's memberships in this ledger (`member show --json`), on the calling thread.
    func membershipsNow(_ identifier: String, _ request: HTTPRequest) throws -> JSONValue {
        try readingNow(try membershipsRead(identifier, request))
    }

    /// The answer of `GET /v1/members/{id}` for these memberships.
    static func memberAnswer(_ identifier: String, _ memberships: JSONValue) -> HTTPResponse {
        let hasAccess = memberships.arrayValue?.contains { $0["member"]?["hasAccess"]?.boolValue == true } ?? false
        return .json(["identifier": .string(identifier), "hasAccess": .bool(hasAccess), "memberships": memberships])
    }

    /// The memberships as one read: the parameters checked now, the answer made in the read.
    private func membershipsRead(_ identifier: String, _ request: HTTPRequest) throws(APIError) -> @Sendable (Ledger) throws -> JSONValue {
        let now = now()
        let asOf = try Self.clock(request, "asOf", now: now) ?? now
        let knownAt = try Self.clock(request, "knownAt", now: now)
        return { ledger in try ledger.memberAccessJSON(identifier, asOf: asOf, knownAt: knownAt) }
    }

    /// `GET /v1/groups/{ref}`: `group show --json`.
    func group(_ reference: String, _ request: HTTPRequest) async throws -> HTTPResponse {
        try await reading(try groupRead(reference, request))
    }

    /// ``group(_:_:)`` on the calling thread, which may block (``LedgerService/handleImmediately(_:)``).
    func groupNow(_ reference: String, _ request: HTTPRequest) throws -> HTTPResponse {
        try readingNow(try groupRead(reference, request))
    }

    /// `GET /v1/groups/{ref}` as one read: the parameters checked now, the answer made in the read.
    private func groupRead(_ reference: String, _ request: HTTPRequest) throws(APIError) -> @Sendable (Ledger) throws -> HTTPResponse {
        let now = now()
        let asOf = try Self.clock(request, "asOf", now: now) ?? now
        let knownAt = try Self.clock(request, "knownAt", now: now)
        return { ledger in .json(try ledger.groupState(reference, asOf: asOf, knownAt: knownAt).json) }
    }

    /// `GET /v1/groups`: `{"groups": [group show --json …], "nextCursor"}`, by group key, after
    /// `cursor` (the last key of the previous page), at most `limit`, filtered by `status`/`product`.
    func groups(_ request: HTTPRequest) async throws -> HTTPResponse {
        let now = now()
        let asOf = try Self.clock(request, "asOf", now: now) ?? now
        let knownAt = try Self.clock(request, "knownAt", now: now)
        let limit = Int(try Self.integer(request, "limit", range: 1...Int64(maxPageSize)) ?? 100)
        let cursor = request.queryValue("cursor")
        let status = request.queryValue("status")
        // A status the projection never gives (a typo such as `ACTVE`) would match no group and
        // read as "there are none": refuse it, naming the ones that exist.
        if let status, !GroupStatus.knownValues.contains(status.uppercased()) {
            throw APIError.badParameter("status", status, expected: "one of " + GroupStatus.knownValues.sorted().joined(separator: ", "))
        }
        let product = request.queryValue("product")
        let (page, more) = try await reading { ledger in
            try ledger.groupsPage(asOf: asOf, knownAt: knownAt, after: cursor, limit: limit) { state in
                (status.map { $0.caseInsensitiveCompare(state.status.rawValue) == .orderedSame } ?? true)
                    && (product.map { $0 == state.productId } ?? true)
            }
        }
        let next: JSONValue = more ? .optional(page.last?.groupKey) : .null
        return .json(["groups": .array(page.map(\.json)), "nextCursor": next])
    }

    /// `GET /v1/groups/{ref}/replay`: `replay --json` (`from`, `to`, `knownAt`).
    func replay(_ reference: String, _ request: HTTPRequest) async throws -> HTTPResponse {
        let now = now()
        let from = try Self.clock(request, "from", now: now), to = try Self.clock(request, "to", now: now)
        let knownAt = try Self.clock(request, "knownAt", now: now)
        if let from, let to, from > to {
            throw APIError(status: 400, code: "bad_parameter", message: "from (\(Timestamp.iso8601(from))) is after to (\(Timestamp.iso8601(to)))")
        }
        let entries = try await reading { ledger in try ledger.replay(reference, from: from, to: to, knownAt: knownAt, now: now) }
        return .json(["reference": .string(reference), "entries": .array(entries.map(\.json))])
    }

    /// `GET /v1/groups/{ref}/diff`: `diff --json`: `knownAt` twice, `asOf` twice, or `against=apple`.
    func diff(_ reference: String, _ request: HTTPRequest) async throws -> HTTPResponse {
        let now = now()
        let knownAt = try Self.clocks(request, "knownAt", now: now), asOf = try Self.clocks(request, "asOf", now: now)
        if let against = request.queryValue("against") {
            guard against == "apple" else { throw APIError.badParameter("against", against, expected: "apple") }
            guard knownAt.isEmpty, asOf.count <= 1 else {
                throw APIError(status: 400, code: "bad_parameter", message: "against=apple takes no knownAt and at most one asOf")
            }
            let comparison = try await reading { ledger in try ledger.compareWithApple(reference, asOf: asOf.first ?? now) }
            return .json(comparison.json)
        }
        if knownAt.count == 2, asOf.count <= 1 {
            let diff = try await reading { ledger in try ledger.diff(reference, knownAt: knownAt[0], knownAt[1], asOf: asOf.first ?? now) }
            return .json(diff.json)
        }
        if asOf.count == 2, knownAt.count <= 1 {
            let diff = try await reading { ledger in try ledger.diff(reference, asOf: asOf[0], asOf[1], knownAt: knownAt.first) }
            return .json(diff.json)
        }
        throw APIError(status: 400, code: "bad_parameter", message: "give knownAt twice, asOf twice, or against=apple")
    }

    /// `GET /v1/groups/{ref}/audit`: `audit group`, `format=json` (default), `markdown` or `html`.
    func audit(_ reference: String, _ request: HTTPRequest) async throws -> HTTPResponse {
        let formatText = request.queryValue("format") ?? "json"
        guard let format = ReportFormat(rawValue: formatText) else {
            throw APIError.badParameter("format", formatText, expected: "json, markdown, html or text")
        }
        let now = now()
        let asOf = try Self.clock(request, "asOf", now: now) ?? now
        let report = try await reading { ledger in try ledger.auditGroup(reference, asOf: asOf, now: now).render(format, color: false) }
        let type: String
        switch format {
        case .json: type = "application/json"
        case .html: type = "text/html; charset=utf-8"
        case .markdown: type = "text/markdown; charset=utf-8"
        case .text: type = "text/plain; charset=utf-8"
        }
        return HTTPResponse(status: 200, contentType: type, text: report + "\n")
    }

    /// `GET /v1/changes?after=P&limit=N&wait=S`: committed events after position `P`, in position
    /// order, each with the keys of the groups that hold any identifier it mentions (the groups
    /// its append re-folded); waits up to `S` seconds for one when there is none yet.
    ///
    /// `{"changes": [{"position", "eventId", "kind", "type", "subtype", "occurredAt", "recordedAt",
    /// "groupKeys"}], "next": <the cursor for the next call>, "head"}`.
    ///
    /// A cursor past the head is a 409 (`cursor_past_head`, with `head`): the log only grows, so
    /// the client's cursor came from another ledger or from this one before a restore, and the
    /// events at its positions are not the ones it saw. Answering an empty page would let it skip
    /// every event up to its cursor without knowing.
    func changes(_ request: HTTPRequest) async throws -> HTTPResponse {
        let after = try Self.integer(request, "after", range: 0...Int64.max) ?? 0
        let limit = try Self.integer(request, "limit", range: 1...Int64(maxPageSize)) ?? 100
        let waitSeconds = try Self.integer(request, "wait", range: 0...maxChangeWait.components.seconds) ?? 0
        var head = try await reading { ledger in try ledger.headPosition() }
        guard after <= head else {
            throw APIError(status: 409, code: "cursor_past_head",
                           message: "after=\(after) is past the ledger's head, position \(head): this cursor was not given by this ledger as it is (restored from a backup?); read again from a position at or before \(head)",
                           details: ["head": .int(head)])
        }
        if head == after, waitSeconds > 0 {
            head = max(head, await pool.waitForHead(after: after, timeout: .seconds(waitSeconds)))
        }
        // head >= after here, so neither the difference nor the sum can overflow.
        let last = after + min(limit, head - after)
        let observedHead = head
        let changes = try await reading { ledger -> [JSONValue] in
            guard last > after else { return [] }
            let events = try ledger.events(at: Array((after + 1)...last))
            return try events.map { event in
                let keys = try ledger.groupKeys(ofEventAt: event.position).sorted()
                return ["position": .int(event.position), "eventId": .string(event.eventId), "kind": .string(event.kind.rawValue),
                        "type": .optional(event.type), "subtype": .optional(event.subtype),
                        "occurredAt": .timestamp(event.occurredAt), "recordedAt": .timestamp(event.recordedAt),
                        "groupKeys": .array(keys.map(JSONValue.string))]
            }
        }
        let next = changes.last?["position"]?.int64Value ?? after
        return .json(["changes": .array(changes), "next": .int(next), "head": .int(observedHead)])
    }
}

extension LedgerService {
    /// `GET /v1/members/{id}` over the request's candidate ledgers (``candidates(_:)``): one
    /// ledger's answer as it is (named by its headers); over several, the memberships of every
    /// ledger that knows the id (those its ``IdentifierFilter`` says may, else all), in the
    /// deployment's order, each with a `ledger` object (name, bundle id, environment).
    func members(_ match: RouteMatch) throws -> HTTPResponse {
        let identifier = match.path("id")
        let candidates = try candidates(match)
        if candidates.count == 1 {
            return Self.named(try readRoutes(candidates[0]).memberNow(identifier, match.request), by: candidates[0])
        }
        var memberships: [JSONValue] = []
        for group in likelyFirst(candidates, identifier: identifier) where memberships.isEmpty {
            for ledger in group {
                for membership in try readRoutes(ledger).membershipsNow(identifier, match.request).arrayValue ?? [] {
                    guard case .object(var members) = membership else { continue }
                    members["ledger"] = ledger.json
                    memberships.append(.object(members))
                }
            }
        }
        return ReadRoutes.memberAnswer(identifier, .array(memberships))
    }
}
