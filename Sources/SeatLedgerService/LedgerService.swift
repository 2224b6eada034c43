import AppStoreModels
import Foundation
import HTTPServer
import LedgerConcurrency
import SeatLedger
import WebhookDelivery

/// `seatledger serve`: Apple's webhook in, acknowledged only once durable, and a read API out,
/// on a ``LedgerPool`` and an ``HTTPServer``.
///
/// ```swift
/// let pool = try LedgerPool.open(path: "ledger.sqlite")
/// let service = try LedgerService(pool: pool, configuration: .init(http: .init(port: 8080), ledgerDescription: "ledger.sqlite"))
/// // … until SIGTERM:
/// await service.shutdown()
/// ```
///
/// Routes: `POST /notifications` (no token: the signature is the authentication), the `/v1`
/// read API (a bearer token whose scopes include `read`), the seat operations under
/// `/v1/groups/{ref}/seats` (scope `seats`, through the App Store Server API: ``SeatRoutes``),
/// `POST /v1/api-responses` (scope `record`: an API response the app server got, recorded as
/// `seatledger record` does), `GET /healthz`, `/readyz`, `/metrics`.
/// With ``ServiceConfiguration/supportDesk`` a second listener on the same pool serves the support
/// desk's read-only pages (``SupportDeskRoutes``).
public final class LedgerService: Sendable {
    /// The ledgers the service serves, in the deployment's order.
    public let ledgers: [ServedLedger]
    /// Where a notification that fits no ledger is kept, quarantined with its raw bytes.
    public let unroutable: ServedLedger
    /// The configuration.
    public let configuration: ServiceConfiguration
    /// The counters `/metrics` shows.
    public let metrics = ServiceMetrics()
    let log: RequestLog
    /// The tasks keeping each ledger's ``IdentifierFilter`` (a service of several ledgers).
    private let followers: [Task<Void, Never>]
    /// The threads webhook posts block (`nil` with access changes off).
    private let postingThreads: BlockingThreads?
    private let server: HTTPServerBox
    private let supportServer: HTTPServerBox

    /// The port the service listens on.
    public var port: UInt16 { server.server?.port ?? 0 }
    /// The port of the support desk's listener, if it has one.
    public var supportPort: UInt16? { supportServer.server?.port }

    /// Serves one ledger, named `default`, as `seatledger serve --db` does; logs the start line.
    public convenience init(pool: LedgerPool, configuration: ServiceConfiguration, log: RequestLog = RequestLog()) throws {
        let ledger = try ServedLedger(name: "default", pool: pool, location: configuration.ledgerDescription, seatAPI: configuration.seatAPI,
                                      notReadyAfterStoreFailure: configuration.notReadyAfterStoreFailure)
        try self.init(ledgers: [ledger], configuration: configuration, log: log)
    }

    /// Starts listening for `ledgers` (at least one, names unique); a notification that fits
    /// none is kept in `unroutable`'s quarantine (default the first). Logs the start line.
    public init(ledgers: [ServedLedger], unroutable: ServedLedger? = nil, configuration: ServiceConfiguration,
                log: RequestLog = RequestLog()) throws {
        precondition(!ledgers.isEmpty && Set(ledgers.map(\.name)).count == ledgers.count, "a service needs ledgers with unique names")
        self.ledgers = ledgers
        self.unroutable = unroutable ?? ledgers[0]
        self.configuration = configuration
        self.log = log
        var postingThreads: BlockingThreads?
        var followers = ledgers.count == 1 ? [] : ledgers.map { ledger in Task.detached { await ledger.identifiers.follow(ledger.pool) } }
        if configuration.accessChanges.enabled {
            let settings = configuration.accessChanges, now = configuration.now
            let poster = WebhookPoster(timeout: settings.timeout)
            let posting = BlockingThreads(count: settings.concurrency, name: "sl-webhook")
            postingThreads = posting
            for ledger in ledgers {
                let follower = AccessChangeFollower(ledger: ledger, now: now, settle: settings.settleMilliseconds, idle: settings.idle,
                                                    pacing: DerivationPacing(coalesce: settings.coalesce, busyCoalesce: settings.busyCoalesce,
                                                                             busyEvents: settings.busyEvents),
                                                    wallClock: settings.wallClock, lease: settings.leaseMilliseconds, log: log)
                let sender = WebhookSender(ledger: ledger, now: settings.wallClock, poster: poster, posting: posting, backoff: settings.backoff, lease: settings.leaseMilliseconds,
                                           concurrency: settings.concurrency, idle: settings.idle, log: log)
                followers.append(Task.detached { await follower.run() })
                followers.append(Task.detached { await sender.run() })
            }
        }
        self.followers = followers
        self.postingThreads = postingThreads
        self.server = HTTPServerBox()
        self.supportServer = HTTPServerBox()
        // libmicrohttpd's own messages become JSON lines of the log, never raw lines on stderr.
        var httpConfiguration = configuration.http
        httpConfiguration.log = { [log] message in log.log(["event": "http_server", "message": .string(message)]) }
        let http = try HTTPServer(configuration: httpConfiguration, immediate: { [weak self] request in
            self?.handleImmediately(request) ?? .notTaken
        }) { [weak self] request in
            guard let self else { return APIError(status: 503, code: "stopping", message: "the service is stopping").response }
            return await self.handle(request)
        } oversize: { [weak self] report in
            self?.refuseOversize(report) ?? HTTPResponse(status: 413)
        }
        server.server = http
        var start: [String: JSONValue] = ["event": "start", "version": .string(configuration.build.version),
                                          "commit": .string(configuration.build.commit),
                                          "ledger": .string(ledgers.count == 1 ? ledgers[0].location : ledgers.map(\.name).joined(separator: ",")),
                                          "ledgers": .array(ledgers.map { ledger in
                                              var fields = ledger.fields
                                              fields["location"] = .string(ledger.location)
                                              return .object(fields)
                                          }),
                                          "address": .string("\(configuration.http.host):\(http.port)")]
        if let desk = configuration.supportDesk {
            let support: HTTPServer
            do {
                var deskConfiguration = desk
                deskConfiguration.log = { [log] message in log.log(["event": "http_server", "listener": "support", "message": .string(message)]) }
                support = try HTTPServer(configuration: deskConfiguration) { [weak self] request in
                    guard let self else { return HTTPResponse(status: 503, contentType: "text/plain; charset=utf-8", text: "the service is stopping\n") }
                    return await self.handleSupport(request)
                } oversize: { _ in
                    HTTPResponse(status: 413, contentType: "text/plain; charset=utf-8", text: "the support desk takes no request bodies\n")
                }
            } catch {
                http.stop(drainTimeout: .zero)
                throw error
            }
            supportServer.server = support
            start["supportAddress"] = .string("\(desk.host):\(support.port)")
        }
        log.log(start)
    }

    /// Stops accepting, answers requests in flight (each after its commit; a change-feed long
    /// poll at once, with what it has), stops the server and closes the pool.
    public func shutdown(drainTimeout: Duration = .seconds(30)) async {
        let http = server.server, support = supportServer.server
        support?.stopAccepting()
        for follower in followers { follower.cancel() }
        for ledger in ledgers {
            ledger.pool.endLongPolls()
            ledger.accessChanges.close()
        }
        let drained = await Task.detached {
            let api = http?.stop(drainTimeout: drainTimeout) ?? true
            let desk = support?.stop(drainTimeout: drainTimeout) ?? true
            return api && desk
        }.value
        for ledger in ledgers { await ledger.pool.close() }
        postingThreads?.close()
        log.log(["event": "stop", "drained": .bool(drained)])
    }

    // MARK: Dispatch

    /// Answers one request (the server calls this for what ``handleImmediately(_:)`` does not
    /// take; tests may call it for any request, with the same answers).
    public func handle(_ request: HTTPRequest) async -> HTTPResponse {
        let started = ContinuousClock.now
        var route = "unmatched"
        var fields: [String: JSONValue] = [:]
        let result: Result<HTTPResponse, any Error>
        do {
            result = .success(try await dispatch(request, route: &route, fields: &fields))
        } catch {
            result = .failure(error)
        }
        return finish(request, route: route, fields: fields, started: started, result)
    }

    /// What the server's polling thread does itself with a request (``ImmediateAnswer``; the
    /// routes whose ``ServiceRoute/immediate`` says so): `GET /v1/members/{id}` and
    /// `GET /v1/groups/{ref}` are answered on it, blocking it for one
    /// short read (``LedgerPool/blockingRead(_:)``); `POST /notifications` is verified on it and
    /// answered from the writer once durable (``LedgerPool/appendReceipts(_:completion:)``);
    /// every other request is left to ``handle(_:)``.
    ///
    /// Why: handing a request to a task and its work to a pool thread, and back twice, woke four
    /// threads per request, which for a read cost more CPU than the read itself (the read API's
    /// and the webhook's targets and figures: `Tools/bench/PERFORMANCE.md`).
    public func handleImmediately(_ request: HTTPRequest) -> ImmediateAnswer {
        guard let match = RouteTable.service.match(request), let immediate = match.route.immediate,
              match.route.allows(request.method) else { return .notTaken }
        let read: @Sendable (LedgerService, RouteMatch) throws -> HTTPResponse
        switch immediate {
        case .handedOn(let answer): return answer(self, match)
        case .blockingRead(let blocking): read = blocking
        }
        let started = ContinuousClock.now
        var fields: [String: JSONValue] = [:]
        let result: Result<HTTPResponse, any Error>
        do {
            var match = match
            if let scope = match.route.scope.tokenScope {
                let grant = try authorizeBlocking(request.header("Authorization"), scope: scope)
                match.grant = grant
                fields["token"] = .string(grant.name)
            }
            try RouteParameters.check(request, route: match.route)
            result = .success(try read(self, match))
        } catch {
            result = .failure(error)
        }
        return .response(finish(request, route: match.route.template, fields: fields, started: started, result))
    }

    /// `POST /notifications` on the polling thread: verified here, handed back by the writer once
    /// the outcome is durable, answered (``receiveNotification(_:fields:)``'s answers) on the
    /// polling thread that sends it: the writer only hands the receipt on, since everything it
    /// does delays the next group commit.
    func receiveNotification(_ match: RouteMatch, respond: @escaping @Sendable (@escaping @Sendable () -> HTTPResponse) -> Void) {
        let started = ContinuousClock.now
        let request = match.request, route = match.route.template
        let (ledger, message) = notificationMessage(match)
        ledger.pool.appendReceipts([message]) { [self] result in
            respond {
                var fields: [String: JSONValue] = ["ledger": .string(ledger.name)]
                let answer = self.notificationAnswer(result.map { $0[0] }, ledger: ledger, fields: &fields)
                return self.finish(request, route: route, fields: fields, started: started, .success(answer))
            }
        }
    }

    /// The answer to a request that `result` is, counted in the metrics and logged.
    private func finish(_ request: HTTPRequest, route: String, fields: [String: JSONValue], started: ContinuousClock.Instant,
                        _ result: Result<HTTPResponse, any Error>) -> HTTPResponse {
        var fields = fields
        let response: HTTPResponse
        switch result {
        case .success(let answer):
            response = answer
        case .failure(let error as APIError):
            fields["outcome"] = fields["outcome"] ?? .string(error.code)
            response = error.response
        case .failure(let error):
            fields["outcome"] = .string("error")
            response = Self.describe(error).response
        }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds)
        let longPoll = route == ServiceRoute.changes.template && (Int(request.queryValue("wait") ?? "") ?? 0) > 0
        metrics.observe(route: route, status: response.status, seconds: longPoll ? nil : seconds)
        if fields["outcome"] == nil { fields["outcome"] = response.status < 400 ? "ok" : "error" }
        if fields["ledger"] == nil, let named = response.headers.first(where: { $0.name == "SeatLedger-Ledger" }) {
            fields["ledger"] = .string(named.value)
        }
        fields["method"] = .string(request.method)
        fields["path"] = .string(request.path)
        fields["status"] = .int(Int64(response.status))
        fields["durationMs"] = .double((seconds * 1e6).rounded() / 1e3)
        log.log(fields)
        return response
    }

    /// `GET /v1/entitlements/{id}`'s handler, with the configuration's clock.
    var entitlementRoute: EntitlementRoute { EntitlementRoute(service: self, now: configuration.now) }

    /// The read routes' handlers on `ledger`, with the configuration's clock and limits.
    func readRoutes(_ ledger: ServedLedger) -> ReadRoutes {
        ReadRoutes(pool: ledger.pool, now: configuration.now, maxPageSize: configuration.maxPageSize, maxChangeWait: configuration.maxChangeWait)
    }

    /// An error from the ledger as an answer: a reference that resolves to nothing is 404, a
    /// pool that is closed or a store that failed 503.
    static func describe(_ error: any Error) -> APIError {
        if let notFound = error as? GroupNotFound {
            return APIError(status: 404, code: "not_found", message: notFound.description)
        }
        if let notFound = error as? PersonNotFound {
            return APIError(status: 404, code: "not_found", message: notFound.description)
        }
        if let api = error as? APIError { return api }
        return APIError(status: 503, code: "ledger_unavailable", message: "the ledger could not answer: \(error)", headers: [("Retry-After", "5")])
    }

    /// The route the request names (``RouteTable/service``), then its method, token and query
    /// parameters, then its handler; `route` is set (for the metrics) once the path matched.
    private func dispatch(_ request: HTTPRequest, route: inout String, fields: inout [String: JSONValue]) async throws -> HTTPResponse {
        guard var match = RouteTable.service.match(request) else {
            throw APIError(status: 404, code: "not_found", message: "no route \(request.path); see `seatledger serve --help`")
        }
        route = match.route.template
        guard match.route.allows(request.method) else { throw match.route.methodNotAllowed(request.method) }
        if let scope = match.route.scope.tokenScope {
            let grant = try await authorize(request.header("Authorization"), scope: scope)
            match.grant = grant
            fields["token"] = .string(grant.name)
        }
        try RouteParameters.check(request, route: match.route)
        return try await match.route.handler(self, match, &fields)
    }

    /// The seat routes' handlers on `ledger` (``SeatRoutes``: claim, unclaim, associate through Apple).
    func seatRoutes(_ ledger: ServedLedger) -> SeatRoutes {
        SeatRoutes(pool: ledger.pool, now: configuration.now, settings: ledger.seatAPI, log: log)
    }

    // MARK: Health and metrics

    /// `/readyz`: every ledger (or the one `?ledger=` names) answers a read and commits a write
    /// probe, and stored its latest notification. 200 while any is ready, each ledger's state in
    /// `ledgers`; 503 when none is (so one ledger's outage does not take the others' traffic away).
    func readiness(_ request: HTTPRequest) async throws -> HTTPResponse {
        var chosen = ledgers
        if let name = request.queryValue("ledger") {
            guard let named = ledger(named: name) else {
                throw APIError(status: 404, code: "unknown_ledger", message: "this service has no ledger named \(name)")
            }
            chosen = [named]
        }
        var states: [JSONValue] = []
        var ready: [(ServedLedger, Int64)] = []
        var problems: [String] = []
        for ledger in chosen {
            var state = ledger.fields
            do {
                let head = try await Self.readiness(of: ledger)
                ready.append((ledger, head))
                state["status"] = "ready"
                state["headPosition"] = .int(head)
                if ledgers.count > 1 {
                    // Whether searches across ledgers skip this one for ids it does not know yet.
                    state["identifierFilter"] = ledger.identifiers.isReady ? "ready" : "building"
                }
            } catch {
                let message = (error as? APIError)?.message ?? "the ledger is not reachable or writable: \(error)"
                problems.append(chosen.count == 1 ? message : "\(ledger.name): \(message)")
                state["status"] = "not_ready"
                state["message"] = .string(message)
            }
            states.append(.object(state))
        }
        guard !ready.isEmpty else {
            throw APIError(status: 503, code: "not_ready", message: problems.joined(separator: "; "), headers: [("Retry-After", "5")],
                           details: chosen.count == 1 ? [:] : ["ledgers": .array(states)])
        }
        var body: [String: JSONValue] = ["status": ready.count == chosen.count ? "ready" : "degraded", "ledgers": .array(states)]
        if chosen.count == 1 { body["headPosition"] = .int(ready[0].1) }
        return .json(.object(body))
    }

    /// One ledger's readiness: its head, or the reason it is not ready.
    private static func readiness(of ledger: ServedLedger) async throws -> Int64 {
        do {
            // The writer commits a write that reaches the disk (a full disk or a file size limit
            // fails it, as it fails every append: Apple's notifications for it should go
            // elsewhere), and a reader sees the store.
            let head = try await ledger.pool.write { ledger in
                try ledger.probeWrite()
                return try ledger.headPosition()
            }
            _ = try await ledger.pool.read { ledger in try ledger.headPosition() }
            if let failure = ledger.storeFailures.recent() {
                let seconds = failure.ago.components.seconds
                throw APIError(status: 503, code: "not_ready",
                               message: "a notification could not be stored \(seconds) s ago: \(failure.reason)",
                               headers: [("Retry-After", "5")])
            }
            return head
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError(status: 503, code: "not_ready", message: "the ledger is not reachable or writable: \(error)", headers: [("Retry-After", "5")])
        }
    }

    func metricsResponse() async throws -> HTTPResponse {
        var states: [ServiceMetrics.LedgerState] = []
        let now = Timestamp.millis(Date())
        for ledger in ledgers {
            let read = try? await ledger.pool.read { ledger -> (newest: Int64?, open: Int) in
                (try ledger.newestRecordedAt(), try ledger.quarantineCount(state: "open"))
            }
            var state = ServiceMetrics.LedgerState(name: ledger.name, headPosition: ledger.pool.headPosition,
                                                   newestEventAgeSeconds: (read?.newest).map { Double(now - $0) / 1000 },
                                                   openQuarantineItems: read?.open)
            if configuration.accessChanges.enabled {
                let wall = configuration.accessChanges.wallClock()
                let counters = ledger.accessChanges
                state.accessChanges = try? await ledger.pool.read { ledger in
                    let tally = try ledger.deliveryTally()
                    let status = try ledger.accessDerivationStatus()
                    return ServiceMetrics.AccessChangeGauges(
                        transitionsEmitted: counters.transitionsEmitted.load(ordering: .relaxed),
                        attempts: ["delivered": counters.delivered.load(ordering: .relaxed), "retried": counters.retried.load(ordering: .relaxed),
                                   "failed": counters.failed.load(ordering: .relaxed)],
                        oldestUndeliveredAgeSeconds: tally.oldestPendingCreatedAt.map { max(0, Double(wall - $0) / 1000) } ?? 0,
                        endpointsFailing: tally.failingEndpoints, derivationLag: max(0, status.head - status.cursor.position))
                }
            }
            states.append(state)
        }
        return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4",
                            text: metrics.render(ledgers: states, inFlight: server.server?.activeRequests ?? 0, build: configuration.build,
                                                 process: ProcessMetrics.current()))
    }
}

/// Holds the server after `init` starts it (the handler closure must exist before the server).
///
/// `@unchecked Sendable` is safe: `server` is written once in ``LedgerService/init`` before any
/// request can arrive (the handler holds the service weakly and the box is set before `init`
/// returns) and only read afterwards; `NSLock` orders that write before the reads.
final class HTTPServerBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: HTTPServer?
    var server: HTTPServer? {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); stored = newValue; lock.unlock() }
    }
}
