import AppStoreModels
import Foundation
import HTTPServer
import Projections
import Reports
import LedgerStorage
import SeatLedger
import SupportDesk

/// The support desk (`serve --support-listen`): read-only HTML pages on the service's pool, for
/// support staff without a terminal. The pages are rendered by the `SupportDesk` module; this
/// reads the ledger for them.
///
/// | route | page |
/// |---|---|
/// | `GET /` | the search box |
/// | `GET /search?q=ID` | 303 to the group or member page, a list of matches (several groups), or 404 |
/// | `GET /group?ref=REF` | status, seats, Apple's view and drift, the access timeline, members, replay |
/// | `GET /member?id=ID` | "why does this person (not) have access?", per group |
/// | `GET /group/report?ref=REF&format=markdown\|html\|json` | `audit group --format …` as a download |
/// | `GET /member/report?id=ID&format=markdown\|html\|json\|member-json` | `audit member --format …`, or `member show --json` |
/// | `GET /healthz` | `ok` |
///
/// Every page takes `asOf` and `knownAt` (ISO 8601, epoch ms, `now`, `7d`…: the CLI's rule), as the JSON API. No token: the
/// listener is meant for loopback behind an SSH tunnel or a proxy with the company's sign-in.
/// Responses forbid scripts, framing and outside resources (`Content-Security-Policy`).
///
/// In a service of several ledgers the search looks in every one: an identifier one ledger
/// knows opens its page there (every link then carries `ledger=`, and the page says which
/// ledger it shows); one several ledgers know lists them, each a link to the search in it.
struct SupportDeskRoutes: Sendable {
    let ledgers: [ServedLedger]
    let now: @Sendable () -> EpochMillis
    /// Whether a request must name a loopback host (`Host: localhost:…`, `127.0.0.1:…`, `[::1]:…`):
    /// the desk listens on loopback and has no sign-in of its own, so a web page whose name an
    /// attacker re-points at 127.0.0.1 (DNS rebinding) could otherwise read it through a support
    /// agent's browser. Off behind a sign-in proxy (`--support-listen-public`), whose name it is.
    var checksHost = true

    /// A page the desk answers with an error status.
    struct Failure: Error {
        let status: Int
        let message: String
    }

    static let securityHeaders: [(name: String, value: String)] = [
        ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY"),
        ("Cache-Control", "no-store"),
    ]

    /// Answers one request; `route` is set to the matched route's name (for the log and metrics).
    func answer(_ request: HTTPRequest, route: inout String) async -> HTTPResponse {
        let query = request.queryValue("q") ?? request.queryValue("ref") ?? request.queryValue("id") ?? ""
        var clocks = DeskClocks(now: now())
        do {
            guard request.method == "GET" || request.method == "HEAD" else {
                route = "desk"
                throw Failure(status: 405, message: "\(request.method) is not allowed: the support desk is read-only (GET)")
            }
            if checksHost, let host = request.header("Host"), !Self.isLoopbackName(host) {
                route = "desk"
                throw Failure(status: 403, message: "this desk answers to localhost and 127.0.0.1 only, not to the host name \(host): "
                              + "open it as http://localhost:PORT (through an SSH tunnel from elsewhere)")
            }
            clocks = try Self.clocks(request, now: clocks.now)
            if let name = Self.value(request, "ledger") {
                guard ledgers.contains(where: { $0.name == name }) else {
                    throw Failure(status: 404, message: "no ledger named \(name) here; it serves " + ledgers.map(\.name).joined(separator: ", "))
                }
                clocks.ledger = name
            }
            switch request.path {
            case "/":
                route = "desk /"
                if let q = Self.value(request, "q") { return try await search(q, clocks) }
                return Self.page(MessagePages.home(clocks: clocks))
            case "/search":
                route = "desk /search"
                guard let q = Self.value(request, "q") else { return Self.redirect("/") }
                return try await search(q, clocks)
            case "/group":
                route = "desk /group"
                return try await group(try Self.required(request, "ref"), clocks)
            case "/member":
                route = "desk /member"
                return try await member(try Self.required(request, "id"), clocks)
            case "/group/report":
                route = "desk /group/report"
                return try await groupReport(try Self.required(request, "ref"), format: Self.value(request, "format") ?? "html", clocks)
            case "/member/report":
                route = "desk /member/report"
                return try await memberReport(try Self.required(request, "id"), format: Self.value(request, "format") ?? "html", clocks)
            case "/healthz":
                route = "desk /healthz"
                return HTTPResponse(status: 200, contentType: "text/plain; charset=utf-8", text: "ok\n", headers: Self.securityHeaders)
            default:
                route = "desk unmatched"
                throw Failure(status: 404, message: "no page \(request.path) here; start at / and search for an identifier")
            }
        } catch let notFound as GroupNotFound {
            return Self.page(MessagePages.notFound(query: query, message: notFound.description, clocks: clocks), status: 404)
        } catch let failure as Failure {
            var headers: [(name: String, value: String)] = []
            if failure.status == 405 { headers.append(("Allow", "GET, HEAD")) }
            return Self.page(MessagePages.error(status: failure.status, message: failure.message, query: query, clocks: clocks),
                             status: failure.status, headers: headers)
        } catch let api as APIError {
            return Self.page(MessagePages.error(status: api.status, message: api.message, query: query, clocks: clocks), status: api.status)
        } catch {
            return Self.page(MessagePages.error(status: 503, message: "the ledger could not answer: \(error)", query: query, clocks: clocks),
                             status: 503, headers: [("Retry-After", "5")])
        }
    }

    // MARK: Pages

    private func search(_ q: String, _ clocks: DeskClocks) async throws -> HTTPResponse {
        let asOf = clocks.effectiveAsOf, knownAt = clocks.knownAt
        let searched = clocks.ledger.map { name in ledgers.filter { $0.name == name } } ?? ledgers
        var found: [(ServedLedger, DeskSearch.Outcome)] = []
        var notFound: (any Error)?
        for ledger in searched {
            do {
                let outcome = try await ledger.pool.read { ledger -> DeskSearch.Outcome in
                    // The app's user id: the member page of the person the app server linked it to.
                    if try !ledger.linkedIdentifiers(of: q, knownAt: knownAt).isEmpty { return .member(q) }
                    let keys = try ledger.groupKeys(for: q)
                    // Nothing: the ledger's own GroupNotFound ("no group or member matches …"), as `group show` says it.
                    guard !keys.isEmpty else { _ = try ledger.groupState(q, asOf: asOf, knownAt: knownAt); return .nothing }
                    let groups = keys.compactMap { key in try? ledger.groupState(key, asOf: asOf, knownAt: knownAt) }
                    let members = (try? ledger.memberAccess(q, asOf: asOf, knownAt: knownAt)) ?? []
                    return DeskSearch.resolve(q, groups: groups, members: members.map { ($0.group, $0.member) })
                }
                if outcome != .nothing { found.append((ledger, outcome)) }
            } catch let error as GroupNotFound {
                notFound = error
            }
        }
        guard found.count <= 1 else {
            let entries = found.map { LedgersPage.Entry(name: $0.0.name, bundleId: $0.0.bundleId, environment: $0.0.environment.rawValue) }
            return Self.page(LedgersPage.render(query: q, ledgers: entries, clocks: clocks))
        }
        guard let (ledger, outcome) = found.first else {
            if let notFound { throw notFound }
            throw Failure(status: 404, message: "no group or member matches \(q)")
        }
        var clocks = clocks
        if ledgers.count > 1 { clocks.ledger = ledger.name }
        switch outcome {
        case .nothing: throw Failure(status: 404, message: "no group or member matches \(q)")
        case .group(let key): return Self.redirect(DeskLink.group(key, clocks))
        case .member(let id): return Self.redirect(DeskLink.member(id, clocks))
        case .matches(let matches): return Self.page(MatchesPage.render(query: q, matches: matches, clocks: clocks))
        }
    }

    private func group(_ reference: String, _ clocks: DeskClocks) async throws -> HTTPResponse {
        let asOf = clocks.effectiveAsOf, knownAt = clocks.knownAt, now = clocks.now
        let model = try await reading(clocks) { ledger -> GroupPage.Model in
            let state = try ledger.groupState(reference, asOf: asOf, knownAt: knownAt)
            let key = state.groupKey
            // Anomalies and actions as `audit group` finds them; the replay at the page's clocks.
            let base = try ledger.auditGroup(key, asOf: asOf, now: now)
            let replay = knownAt == nil ? base.timeline : try ledger.replay(key, to: asOf, knownAt: knownAt, now: now)
            let audit = GroupAudit(state: state, timeline: replay, anomalies: base.anomalies, actions: base.actions, generatedAt: now)
            return GroupPage.Model(audit: audit, apple: try ledger.compareWithApple(key, asOf: asOf), clocks: clocks)
        }
        return Self.page(GroupPage.render(model, query: reference))
    }

    private func member(_ identifier: String, _ clocks: DeskClocks) async throws -> HTTPResponse {
        let audit = try await memberAudit(identifier, clocks)
        let changes = try await reading(clocks) { ledger in try Self.accessChanges(naming: identifier, in: ledger) }
        return Self.page(MemberPage.render(MemberPage.Model(audit: audit, clocks: clocks, accessChanges: changes), query: identifier))
    }

    /// The access transitions whose subject `identifier` names (the last 200), with their deliveries.
    static func accessChanges(naming identifier: String, in ledger: Ledger) throws -> [MemberAccessChange] {
        var rows: [StoredAccessTransition] = []
        var after: Int64 = 0
        while true {
            let page = try ledger.accessTransitions(after: after, limit: 1_000, filter: AccessTransitionFilter(mentioning: identifier))
            rows += page
            guard let last = page.last, page.count == 1_000 else { break }
            after = last.seq
        }
        rows = Array(rows.suffix(200))
        let deliveries = Dictionary(grouping: try ledger.webhookDeliveries(messageIds: rows.map { Ledger.webhookMessageID($0.id) }), by: \.messageId)
        return rows.map { row in
            MemberAccessChange(seq: row.seq, transition: (try? JSONValue.parse(row.body)) ?? .null,
                               deliveries: (deliveries[Ledger.webhookMessageID(row.id)] ?? []).map {
                                   MemberAccessChange.Delivery(endpointId: $0.endpointId, state: $0.state, attempts: $0.attempts,
                                                               lastStatus: $0.lastStatus, lastError: $0.lastError)
                               })
        }
    }

    /// `audit member` at the page's clocks (`knownAt` included, which the CLI report does not take).
    private func memberAudit(_ identifier: String, _ clocks: DeskClocks) async throws -> MemberAudit {
        let asOf = clocks.effectiveAsOf, knownAt = clocks.knownAt, now = clocks.now
        return try await reading(clocks) { ledger in try ledger.auditMember(identifier, asOf: asOf, knownAt: knownAt, now: now) }
    }

    private func groupReport(_ reference: String, format text: String, _ clocks: DeskClocks) async throws -> HTTPResponse {
        let format = try Self.format(text, allowed: ["markdown", "html", "json"])
        let asOf = clocks.effectiveAsOf, now = clocks.now
        let (key, report) = try await reading(clocks) { ledger in
            let audit = try ledger.auditGroup(reference, asOf: asOf, now: now)
            return (audit.state.groupKey, audit.render(format, color: false))
        }
        return Self.download(report, format: format, name: "audit-group-\(key)")
    }

    private func memberReport(_ identifier: String, format text: String, _ clocks: DeskClocks) async throws -> HTTPResponse {
        if text == "member-json" {
            let asOf = clocks.effectiveAsOf, knownAt = clocks.knownAt
            let json = try await reading(clocks) { ledger in try ledger.memberAccessJSON(identifier, asOf: asOf, knownAt: knownAt) }
            return Self.download(json.prettyString(), format: .json, name: "member-\(identifier)")
        }
        let format = try Self.format(text, allowed: ["markdown", "html", "json", "member-json"])
        let asOf = clocks.effectiveAsOf, now = clocks.now
        let report = try await reading(clocks) { ledger in try ledger.auditMember(identifier, asOf: asOf, now: now).render(format, color: false) }
        return Self.download(report, format: format, name: "audit-member-\(identifier)")
    }

    // MARK: Helpers

    /// Reads the page's ledger: the one its `ledger` parameter names, or the only one. A page of a
    /// service of several reached without one (an old bookmark) is a 404 pointing at the search.
    private func reading<T: Sendable>(_ clocks: DeskClocks, _ body: @escaping @Sendable (Ledger) throws -> T) async throws -> T {
        guard let ledger = clocks.ledger.flatMap({ name in ledgers.first { $0.name == name } }) ?? (ledgers.count == 1 ? ledgers[0] : nil) else {
            throw Failure(status: 404, message: "this desk serves \(ledgers.count) ledgers and the link names none: search for the identifier from /")
        }
        return try await ledger.pool.read(body)
    }

    /// A query parameter's value without the blanks around it (a pasted identifier often has
    /// some); an empty one (a form's blank field) counts as absent.
    static func value(_ request: HTTPRequest, _ name: String) -> String? {
        request.queryValues(name).lazy.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.first { !$0.isEmpty }
    }

    /// Whether a `Host` header names this machine's loopback: `localhost`, an address in
    /// 127.0.0.0/8 or `[::1]`, with or without a port (an SSH tunnel's local port differs from
    /// the desk's).
    static func isLoopbackName(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { return false }
            return name[name.index(after: name.startIndex)..<close] == "::1"
        }
        if let colon = name.lastIndex(of: ":") { name = String(name[..<colon]) }
        if name.hasSuffix(".") { name.removeLast() }
        if name == "localhost" { return true }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    static func required(_ request: HTTPRequest, _ name: String) throws -> String {
        guard let value = value(request, name) else { throw Failure(status: 400, message: "query parameter \(name) is missing; search from /") }
        return value
    }

    /// `asOf` and `knownAt`, as the JSON API reads them (a blank form field is absent).
    static func clocks(_ request: HTTPRequest, now: EpochMillis) throws -> DeskClocks {
        func clock(_ name: String) throws -> EpochMillis? {
            guard let text = value(request, name) else { return nil }
            return try ReadRoutes.moment(name, text, now: now)   // the read API's rule; its 400 becomes this page's
        }
        return DeskClocks(asOf: try clock("asOf"), knownAt: try clock("knownAt"), now: now)
    }

    static func format(_ text: String, allowed: [String]) throws -> ReportFormat {
        guard allowed.contains(text), let format = ReportFormat(rawValue: text) else {
            throw Failure(status: 400, message: "format=\(text) is not one of \(allowed.joined(separator: ", "))")
        }
        return format
    }

    static func page(_ html: String, status: Int = 200, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "text/html; charset=utf-8", text: html + "\n", headers: securityHeaders + headers)
    }

    static func redirect(_ location: String) -> HTTPResponse {
        HTTPResponse(status: 303, contentType: "text/html; charset=utf-8",
                     text: "<!DOCTYPE html><title>See other</title><a href=\"\(AuditHTML.escape(location))\">continue</a>\n",
                     headers: securityHeaders + [("Location", location)])
    }

    /// A report as a file: its media type and `Content-Disposition: attachment` with a safe name.
    static func download(_ text: String, format: ReportFormat, name: String) -> HTTPResponse {
        let (type, ext): (String, String)
        switch format {
        case .markdown: (type, ext) = ("text/markdown; charset=utf-8", "md")
        case .html: (type, ext) = ("text/html; charset=utf-8", "html")
        case .json: (type, ext) = ("application/json", "json")
        case .text: (type, ext) = ("text/plain; charset=utf-8", "txt")
        }
        return HTTPResponse(status: 200, contentType: type, text: text + "\n",
                            headers: securityHeaders + [("Content-Disposition", "attachment; filename=\"\(DeskLink.fileName(name, extension: ext))\"")])
    }
}

extension LedgerService {
    /// Answers one request of the support desk's listener (the server calls this; tests may too).
    public func handleSupport(_ request: HTTPRequest) async -> HTTPResponse {
        let clock = ContinuousClock()
        let started = clock.now
        var route = "desk"
        var routes = SupportDeskRoutes(ledgers: ledgers, now: configuration.now)
        routes.checksHost = configuration.supportDesk.map { $0.host.hasPrefix("127.") } ?? true
        let response = await routes.answer(request, route: &route)
        let elapsed = clock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        metrics.observe(route: route, status: response.status, seconds: seconds)
        // The path only: identifiers travel in the query and stay out of the log.
        log.log(["listener": "support", "method": .string(request.method), "path": .string(request.path),
                 "status": .int(Int64(response.status)), "durationMs": .double((seconds * 1e6).rounded() / 1e3)])
        return response
    }
}
