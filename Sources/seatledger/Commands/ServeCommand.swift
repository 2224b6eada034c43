import AppStoreModels
import Dispatch
import Foundation
import Synchronization
import HTTPServer
import SeatLedger
import SeatLedgerService
import WebhookDelivery

/// `seatledger serve`: the webhook receiver and read API over HTTP.
enum ServeCommand: Command {
    static let name = "serve"
    static let summary = "run the HTTP service: Apple's webhook in (acknowledged once durable), the read API out"
    static let listen = Option<String?>("listen", value: "HOST:PORT", help: """
        IPv4 address and port (default $SEATLEDGER_LISTEN, else 127.0.0.1:8080;
        port 0 picks one)
        """)
    static let threads = Option<Int>("threads", value: "N", help: "HTTP polling threads (default one per core, at least 2)",
                                     default: HTTPServerConfiguration.defaultThreads, parse: .integer(in: 1...256))
    static let readers = Option<Int>("readers", value: "N", help: "read connections of the ledger pool (default 4)",
                                     default: 4, parse: .integer(in: 1...64))
    static let maxConnections = Option<Int>("max-connections", value: "N", help: "open connections at most (default 1024)",
                                            default: 1_024, parse: .integer(in: 1...1_000_000))
    static let timeout = Option<Int>("timeout", value: "S", help: "close a connection idle or trickling for S seconds (default 30)",
                                     default: 30, parse: .integer(in: 1...3_600))
    static let maxBody = Option<Int>("max-body", value: "BYTES", help: "largest request body (default 1048576)",
                                     default: 1 << 20, parse: .integer(in: 1_024...(64 << 20)))
    /// The HTTP listener's options (`--help` lists them at column 23).
    static let http: [any DeclaredOption] = [listen] + LedgerLocation.options + [threads, readers, maxConnections, timeout, maxBody]

    static let apiTimeout = Option<Double?>("api-timeout", value: "S", help: "seconds per request to Apple (default 30)", parse: .seconds(upTo: 600))
    static let apiMaxAttempts = Option<Int>("api-max-attempts", value: "N", help: """
        requests per call including retries of 429, 5xx and timeouts (default 5);
        a call holds the ledger's writer while it runs
        """, default: 5, parse: .integer(in: 1...20))
    /// The seat endpoints' App Store Server API.
    static let seatAPI: [any DeclaredOption] = [
        APIOptions.issuerId.help("else $SEATLEDGER_ISSUER_ID, else the credentials file"),
        APIOptions.keyId.help("else $SEATLEDGER_KEY_ID, else the credentials file"),
        APIOptions.privateKey.help("the .p8 key (else $SEATLEDGER_PRIVATE_KEY_FILE, else the credentials file)"),
        APIOptions.credentials.help("JSON {\"issuerId\",\"keyId\",\"privateKeyFile\"} (default: `api-config --credentials`)"),
        APIOptions.baseURL.help("""
            else $SEATLEDGER_API_BASE_URL, else `api-config --api-base-url`, else the
            environment's host; without credentials the seat endpoints answer 503
            """),
        apiTimeout, apiMaxAttempts,
    ]
    /// Tamper evidence.
    static let trust: [any DeclaredOption] = [
        AnchorOption.option.help("""
            a head anchor (see `seatledger verify --anchor`): checked at start (a
            ledger that no longer holds the anchored heads, or whose trust
            configuration changed without `--anchor`, is refused, exit 2) and
            rewritten after every commit that moves the head; a trust change
            underneath it stops the server (exit 2) instead of being written
            """),
        PinnedRoots.option.help("""
            pin a trusted root by its SHA-256 fingerprint (repeatable; default
            $SEATLEDGER_TRUSTED_ROOTS, comma-separated): a ledger holding any
            other root is refused (exit 2), naming it
            """),
    ]
    static let supportListen = Option<String?>("support-listen", value: "[HOST:]PORT", help: """
        also serve the desk's pages there (a bare PORT is 127.0.0.1:PORT;
        port 0 picks one; the start line's supportAddress names it)
        """)
    /// (Its first line lines up with `--support-listen`'s.)
    static let supportListenPublic = Flag("support-listen-public", help: """
             allow a HOST other than loopback (127.0.0.0/8): only behind a
        proxy with sign-in, since the desk asks for no token
        """)
    /// The support desk.
    static let desk: [any DeclaredOption] = [supportListen, supportListenPublic]
    /// `--no-access-changes`: neither derive access transitions nor send webhooks.
    static let noAccessChanges = Flag("no-access-changes", help: """
        derive no access transitions and send no webhooks (the feed stays
        where it is; a later serve derives from where it stopped)
        """)
    /// `--webhook-retry-delays`: the retry schedule's delays.
    static let retryDelays = Option<String?>("webhook-retry-delays", value: "LIST", help: """
        seconds between a failed delivery's attempts, comma-separated, the last
        repeated until three days have passed (default 5,30,120,600,1800,3600,
        10800,21600,43200; each ±20% jitter)
        """)
    /// `--webhook-give-up-after`: how long a delivery is retried.
    static let giveUpAfter = Option<Int?>("webhook-give-up-after", value: "SECONDS", help: """
        retry a failed delivery until this long after its first attempt, then
        mark it failed and its endpoint failing (default 262800: 73 hours)
        """, parse: .positiveInteger)
    /// `--webhook-lease`: how long a claimed delivery is this process's.
    static let lease = Option<Int?>("webhook-lease", value: "SECONDS", help: """
        how long a delivery this serve took stays its own before another serve of
        the ledger may send it: a serve killed mid-post leaves its deliveries to
        the others once it ends (default 60; shorter than a post's 10 s timeout,
        a slow delivery may be sent twice)
        """, parse: .positiveInteger)
    /// Access changes and webhooks.
    static let accessChanges: [any DeclaredOption] = [noAccessChanges, retryDelays, giveUpAfter, lease]
    /// `--check-config FILE`: say what `serve --config FILE` would do, and stop.
    static let checkConfig = Option<String?>("check-config", value: "FILE", help: """
        open each ledger of FILE read-only and say what `serve --config FILE`
        would serve (each ledger's app, environment, head, tokens and URL path),
        then exit: 0 when every ledger can be served, 2 naming what cannot
        """)
    /// Several ledgers.
    static let deployment: [any DeclaredOption] = [checkConfig, Flag.json.help("with --check-config: the findings as JSON on stdout")]
    static let options: [any DeclaredOption] = http + seatAPI + trust + desk + accessChanges + deployment
    static let help = """
    Usage: seatledger serve [--listen HOST:PORT] [--db PATH|URL | --config FILE [--ledger NAME …]]
                            [--threads N] [--readers N] [--max-connections N] [--timeout S] [--max-body BYTES]
                            [--issuer-id ID --key-id ID --private-key FILE | --credentials FILE]
                            [--api-base-url URL] [--api-timeout S] [--api-max-attempts N]
                            [--support-listen [HOST:]PORT [--support-listen-public]]
           seatledger serve --check-config FILE [--json]

    Serves the ledger over HTTP/1.1 (libmicrohttpd; put a TLS-terminating proxy in front, see
    Tools/deploy/). Several `serve` processes may share one PostgreSQL ledger.

    One serve, several ledgers (every app, both environments): --config FILE (or
    $SEATLEDGER_CONFIG) names them, {"listen", "supportListen", "unroutable", "ledgers": [{"name",
    "db", "anchor"?, "credentials"?, "apiBaseURL"?}]}, ${VAR} in a string being the environment's.
    Each stays one app in one environment with its own chain, quarantine, tokens and anchor.
    POST /notifications/{ledger} appends to the ledger named (the URL per app and environment in
    App Store Connect); POST /notifications goes to the ledger of the payload's app and
    environment; a notification that fits none is kept in the unroutable ledger's quarantine
    (no_ledger_for_notification). /v1 routes take ?ledger=NAME, else search every ledger the
    token opens (a token opens the ledgers that hold it, as
    `token add NAME --config FILE --ledger A --ledger B` stores it). --ledger NAME serves only
    the ledgers named.

      POST /notifications        the URL for App Store Connect: the body exactly as Apple posts it.
                                 200 only once the outcome is durable: appended, duplicate, or
                                 quarantined with its raw bytes (unsigned or not JSON); an apiResponse
                                 envelope is quarantined, never applied. 503 + Retry-After when it
                                 cannot be stored; 413 over --max-body (nothing stored). No token.
      GET /v1/members/{id}       {"identifier", "hasAccess", "memberships": <member show --json>}
                                 (asOf, knownAt)
      GET /v1/groups/{ref}       group show --json                    (asOf, knownAt)
      GET /v1/groups             {"groups": [...], "nextCursor"}      (limit, cursor, status, product, asOf, knownAt)
      GET /v1/groups/{ref}/replay   replay --json                     (from, to, knownAt)
      GET /v1/groups/{ref}/diff     diff --json                       (knownAt twice | asOf twice | against=apple)
      GET /v1/groups/{ref}/audit    audit group                       (format=json|markdown|html|text, asOf)
      GET /v1/changes            committed events after a position, each with the group keys it
                                 touched: {"changes", "next", "head"} (after, limit, wait ≤ 60 s);
                                 409 cursor_past_head (with "head") when after is past the head
      POST /v1/groups/{ref}/seats   {"memberRef", "appTransactionId"?, "requestId"?}: Claim Seat
                                 through Apple, as `seats claim` (requestIdentifier stored before
                                 the call; a lost answer is retried with it). 201 {"seatClaimId",
                                 "requestId", "group": <group show --json>}; the same requestId again
                                 answers the same claim (200, no new seat). 409 + seat counts when
                                 the ledger shows no available seat (Apple not called); Apple's
                                 refusal as its status with appleErrorCode; 429/502/504 when Apple
                                 rate-limits, fails or does not answer (retry with the requestId).
      DELETE /v1/groups/{ref}/seats/{seatClaimId}   Unclaim Seat (revoke access in your app too)
      POST /v1/groups/{ref}/seats/{seatClaimId}/associate   {"appTransactionId"}: Associate Seat
      POST /v1/storekit          {"storeKit": {"userId"?, "signedTransaction" | "signedAppTransaction"}}:
                                 what the app sent its server (a transaction's jwsRepresentation
                                 or a signed AppTransaction), verified and appended as a storeKit
                                 event (origin app-server, source naming the token), linking the
                                 user id to its Apple identities. 201 {"outcome", "eventId",
                                 "positions", "linked"}; 200 for the same input again; 400 with
                                 the rejection's code and quarantineId when refused (quarantined).
      POST /v1/api-responses     an App Store Server API response your app server got itself, as
                                 `seatledger record` takes it ({"apiResponse": {…}}): recorded with
                                 origin app-server and the token's name in its source. 201
                                 {"outcome": "appended", "positions", "eventId"}; the same envelope
                                 again 200 "duplicate"; refused: 400 {"error": <code>, "message",
                                 "quarantineId"}, the raw bytes in quarantine; 413 over --max-body
      GET /healthz               liveness: {"status": "ok", "version", "commit"}
      GET /readyz                a read answers and a write reaches the disk; 503 for 30 s after a
                                 notification could not be stored (disk full), naming why
      GET /metrics               Prometheus text: notifications received/appended/duplicate/
                                 quarantined by reason, latency histograms, head, newest event age

    /v1 needs `Authorization: Bearer <token>`, a token whose scopes include the route's: read for
    the reads (`seatledger token add NAME --scope read`), seats for the seat endpoints, link for
    POST /v1/storekit, record for POST /v1/api-responses; one token may carry several
    (`--scope read --scope link`). 401 without a valid token, 403 naming the token, its scopes and
    the one needed. Every App Store Server API response is recorded as an event. Errors are JSON:
    {"error": code, "message": reason}. Clock parameters are ISO 8601 or epoch ms, as the CLI's;
    $SEATLEDGER_NOW pins "now" as for the CLI. A query parameter a /v1 route does not take (asof
    for asOf), or one given more often than it may be, is a 400 naming it, never ignored.

    The support desk (--support-listen): a second listener on the same ledger serving read-only
    HTML pages for support staff: a search box taking any identifier (transaction, app transaction,
    seat claim or group id, memberRef); a group page (status, seats, Apple's view and the drift,
    an access timeline of who had access when with the reason and causing event of every change,
    the replay); a member page answering "why does this person (not) have access?" in one sentence
    with its evidence, causes one level up included; downloads as Markdown, HTML or JSON. Pages
    take asOf and knownAt like /v1. It has NO token: keep it on loopback and reach it through an
    SSH tunnel (ssh -L 8081:127.0.0.1:8081 host) or a proxy that signs staff in with the company's
    sign-in; a non-loopback address is refused unless --support-listen-public says that proxy
    stands in front of it. On loopback it answers only requests whose Host is localhost,
    127.x.x.x or [::1] (403 otherwise: DNS rebinding).

    Logs: one JSON object per line on stderr (a start line with version, commit, ledger and address; per
    request method, path, status, durationMs, outcome, position, eventId; never a body or token).
    SIGTERM or SIGINT: stop accepting, answer requests in flight after their commit (a long
    poll of /v1/changes at once, with what it has), exit 0.

    Options:
    \(OptionHelp.lines(http, column: 23))
    The seat endpoints' App Store Server API, as `seatledger seats claim` finds it:
    \(OptionHelp.lines(seatAPI, column: 24))
    Tamper evidence:
    \(OptionHelp.lines(trust, column: 24))
    The support desk:
    \(OptionHelp.lines(desk, column: 24))

    Access changes (`GET /v1/access-changes`, `seatledger webhook`):
    \(OptionHelp.lines(accessChanges, column: 24))
    Several ledgers (--config above):
    \(OptionHelp.lines(deployment, column: 24))
    """

    /// `--webhook-retry-delays`: positive whole seconds, comma-separated; `nil` when not given.
    static func retrySchedule(_ arguments: Arguments) throws -> [Duration]? {
        guard let text = try arguments[retryDelays] else { return nil }
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        let seconds = parts.compactMap { Int64($0) }.filter { $0 > 0 }
        guard !parts.isEmpty, seconds.count == parts.count else {
            throw UsageError(message: "--webhook-retry-delays \(text): expected positive whole seconds separated by commas, such as 5,30,120")
        }
        return seconds.map { .seconds($0) }
    }

    /// `--support-listen`: `PORT`, `:PORT` or `HOST:PORT`; a host outside 127.0.0.0/8 only with `--support-listen-public`.
    static func supportListener(_ arguments: Arguments, like http: HTTPServerConfiguration, file: DeploymentFile? = nil) throws -> HTTPServerConfiguration? {
        let isPublic = arguments[supportListenPublic] || (file?.supportListenPublic ?? false)
        guard let text = try arguments[supportListen] ?? file?.supportListen else {
            if arguments[supportListenPublic] { throw UsageError(message: "--support-listen-public needs --support-listen HOST:PORT") }
            return nil
        }
        let spelled = text.contains(":") ? (text.hasPrefix(":") ? "127.0.0.1" + text : text) : "127.0.0.1:" + text
        guard let (host, port) = HTTPServerConfiguration.parseListen(spelled) else {
            throw UsageError(message: "--support-listen must be PORT or IPv4:PORT such as 127.0.0.1:8081, got \(text)")
        }
        if !host.hasPrefix("127."), !isPublic {
            throw UsageError(message: "--support-listen \(text) is not a loopback address: the support desk has no token, so it listens on "
                + "127.0.0.1 behind an SSH tunnel or a sign-in proxy; add --support-listen-public if such a proxy guards \(host)")
        }
        var desk = http
        desk.host = host
        desk.port = port
        desk.threads = min(http.threads, 2)
        desk.connectionLimit = min(http.connectionLimit, 256)
        desk.maxBodyBytes = 1_024
        return desk
    }

    /// The ledgers `arguments` name: `--db`'s alone (named `default`), or those of `--config`
    /// (`--ledger` restricting them), each with its anchor (`--anchor` for `--db`, the file's for
    /// `--config`).
    static func servedLedgers(_ arguments: Arguments) throws -> (file: DeploymentFile?, entries: [DeploymentFile.LedgerEntry]) {
        let anchor = try arguments[AnchorOption.option]
        guard let (path, file) = try LedgerLocation.deploymentFile(arguments) else {
            let location = try LedgerLocation(arguments)
            return (nil, [DeploymentFile.LedgerEntry(name: "default", db: location.path, anchor: anchor)])
        }
        if anchor != nil {
            throw UsageError(message: "--anchor applies to --db; with --config each ledger's anchor is its \"anchor\" in \(path)")
        }
        let names = try arguments[LedgerLocation.ledger]
        guard !names.isEmpty else { return (file, file.ledgers) }
        return (file, try names.map { name in
            guard let entry = file.ledger(named: name) else {
                throw UsageError(message: "--ledger \(name): \(path) has no ledger of that name; it has " + file.ledgers.map(\.name).joined(separator: ", "))
            }
            return entry
        })
    }

    /// `serve --check-config FILE`: each ledger opened read-only and checked; exit 2 naming what cannot be served.
    static func checkConfiguration(_ path: String, arguments: Arguments) throws -> Terminal.ExitCode {
        let file: DeploymentFile
        do { file = try DeploymentFile.read(path) } catch { throw InputError(message: "--check-config \(error.description)") }
        let check = LedgerDeployment.check(file, pinnedRoots: try PinnedRoots.pinned(arguments))
        if arguments[Flag.json] {
            Terminal.json(["file": .string(path), "servable": .bool(check.isServable), "listen": .optional(file.listen),
                           "unroutable": .string(file.unroutable ?? file.ledgers[0].name),
                           "ledgers": .array(check.findings.map(\.json)), "problems": .array(check.problems.map(JSONValue.string))])
        } else {
            Terminal.out("\(path): \(file.ledgers.count) ledger\(file.ledgers.count == 1 ? "" : "s"), listening on \(file.listen ?? "--listen, $SEATLEDGER_LISTEN or 127.0.0.1:8080"); "
                         + "notifications that fit none are kept in \(file.unroutable ?? file.ledgers[0].name)'s quarantine")
            for finding in check.findings {
                let app = finding.bundleId.map { "\($0) \(finding.environment ?? "")" } ?? "(not readable)"
                Terminal.out("  \(finding.entry.name): \(app), head \(finding.headPosition.map(String.init) ?? "?"), \(finding.tokens.map(String.init) ?? "?") token(s), "
                             + "\(finding.location); App Store Connect URL: https://HOST/notifications/\(finding.entry.name)")
                for problem in finding.problems { Terminal.out("    problem: \(problem)") }
            }
            for problem in check.problems { Terminal.out("  problem: \(problem)") }
            Terminal.out(check.isServable ? "serve --config \(path) would serve every ledger." : "serve --config \(path) would refuse to start.")
        }
        return check.isServable ? .success : .failure
    }

    static func run(_ arguments: Arguments) async throws -> Terminal.ExitCode {
        if let path = try arguments[checkConfig] { return try checkConfiguration(path, arguments: arguments) }
        if arguments[Flag.json] { throw UsageError(message: "--json applies to --check-config (serve logs JSON lines on stderr)") }
        let served = try servedLedgers(arguments)
        // $SEATLEDGER_LISTEN is for what a container or a unit's environment file sets (an empty one counts as unset).
        let fromEnvironment = ProcessInfo.processInfo.environment["SEATLEDGER_LISTEN"].flatMap { $0.isEmpty ? nil : $0 }
        let given = try arguments[Self.listen]
        let listen = given ?? served.file?.listen ?? fromEnvironment ?? "127.0.0.1:8080"
        guard let (host, port) = HTTPServerConfiguration.parseListen(listen) else {
            let source = given != nil ? "--listen" : served.file?.listen != nil ? "the configuration's \"listen\"" : "$SEATLEDGER_LISTEN"
            throw UsageError(message: "\(source) must be IPv4:PORT such as 127.0.0.1:8080, got \(listen)")
        }
        let http = HTTPServerConfiguration(
            host: host, port: port,
            threads: try arguments[threads],
            connectionLimit: try arguments[maxConnections],
            connectionTimeoutSeconds: try arguments[timeout],
            maxBodyBytes: try arguments[maxBody])
        let readers = try arguments[Self.readers]
        let support = try supportListener(arguments, like: http, file: served.file)
        var seatAPI = SeatAPISettings()
        let credentials = try APIOptions.credentialOptions(arguments)
        // The seat routes read these files per request; a path that cannot be read is refused now,
        // as `seats claim` refuses it, rather than as a 503 on the first claim.
        for (option, file) in [("--private-key", credentials.privateKeyFile), ("--credentials", credentials.credentialsFile)] {
            guard let file else { continue }
            do { try FileChecks.requireReadable(file) } catch let error as InputError { throw InputError(message: "\(option): \(error.message)") }
        }
        seatAPI.issuerId = credentials.issuerId
        seatAPI.keyId = credentials.keyId
        seatAPI.privateKeyFile = credentials.privateKeyFile
        seatAPI.credentialsFile = credentials.credentialsFile
        seatAPI.baseURL = credentials.baseURL
        if let seconds = try arguments[apiTimeout] { seatAPI.timeout = seconds }
        seatAPI.maximumAttempts = try arguments[apiMaxAttempts]

        // Signals first, so a SIGTERM during start-up is not lost: each one, and a stop the
        // anchor keeper asks for, is an element of `stops`, which the server awaits.
        let (stops, stop) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let sources = [SIGINT, SIGTERM].map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { @Sendable in stop.yield() }   // on a dispatch queue, not the main actor
            source.resume()
            return source
        }
        defer { for source in sources { source.cancel() } }

        // Checked before a pool opens: a refused ledger starts nothing.
        for entry in served.entries {
            let location = StoreLocation(entry.db)
            let named = served.file == nil ? "" : "ledger \(entry.name): "
            do {
                try PinnedRoots.require(arguments, store: location.open(readOnly: true), doing: "serve")
            } catch let error as InputError where served.file != nil {
                throw InputError(message: named + error.message)
            }
            if let anchor = entry.anchor {
                let problem: String?
                do { problem = try HeadAnchor.problem(anchor, against: location.open(readOnly: true)) } catch let error as HeadAnchorError {
                    throw InputError(message: "\(named)--anchor \(error.description)")
                }
                if let problem {
                    throw InputError(message: "\(named)refusing to serve: \(problem). Run `seatledger verify --anchor \(anchor)` and restore the ledger from a backup")
                }
            }
        }
        if let file = served.file {
            // Two ledgers of one app and environment: a notification routed by its payload would
            // have two places to go (what `--check-config` reports).
            let check = LedgerDeployment.check(DeploymentFile(ledgers: served.entries), pinnedRoots: nil)
            if let problem = check.problems.first {
                throw InputError(message: "refusing to serve \(file.ledgers.count == served.entries.count ? "the configuration" : "these ledgers"): \(problem)")
            }
        }
        let deployment = LedgerDeployment(file: served.file ?? DeploymentFile(ledgers: served.entries), findings: served.entries.map {
            LedgerDeployment.Finding(entry: $0, location: StoreLocation($0.db).description, problems: [])
        }, problems: [])
        let ledgers: [ServedLedger]
        do {
            ledgers = try await deployment.open(readers: readers, seatAPI: seatAPI)
        } catch {
            throw InputError(message: "\(error)")
        }
        let anchorFailure = AnchorFailure()
        var anchorKeepers: [Task<Void, Never>] = []
        for (entry, ledger) in zip(served.entries, ledgers) {
            guard let anchor = entry.anchor else { continue }
            let pool = ledger.pool, named = served.file == nil ? "" : " (ledger \(entry.name))"
            anchorKeepers.append(Task.detached {
                do {
                    try await pool.keepAnchor(anchor, onError: { error in Terminal.err("seatledger serve: warning: could not update the head anchor\(named): \(error)") })
                } catch let error as HeadAnchorError where error.trustChanged {
                    // A root, token or trust value changed underneath the anchor: stop serving
                    // rather than carry the change into the anchor or act on it.
                    Terminal.err("seatledger serve: stopping\(named): \(error)")
                    anchorFailure.message.withLock { $0 = error.description }
                    stop.yield()
                } catch {
                    Terminal.err("seatledger serve: head anchor\(named): \(error)")
                }
            })
        }
        defer { for keeper in anchorKeepers { keeper.cancel() } }
        let service: LedgerService
        do {
            var configuration = ServiceConfiguration(http: http, ledgerDescription: ledgers.count == 1 ? ledgers[0].location : "")
            configuration.seatAPI = seatAPI
            configuration.supportDesk = support
            configuration.accessChanges.enabled = !arguments[noAccessChanges]
            let delays = try retrySchedule(arguments)
            let span = try arguments[giveUpAfter]
            if delays != nil || span != nil {
                configuration.accessChanges.backoff = DeliveryBackoff(delays: delays ?? DeliveryBackoff.standardDelays,
                                                                      maximumSpan: span.map { Duration.seconds($0) } ?? DeliveryBackoff.standardMaximumSpan)
            }
            if let seconds = try arguments[lease] {
                configuration.accessChanges.leaseMilliseconds = EpochMillis(seconds) * 1_000
            }
            configuration.build = ServiceBuild(version: SeatLedgerVersion.release, commit: BuildCommit.value)
            let unroutable = served.file?.unroutable.flatMap { name in ledgers.first { $0.name == name } }
            service = try LedgerService(ledgers: ledgers, unroutable: unroutable, configuration: configuration)
        } catch {
            for ledger in ledgers { await ledger.pool.close() }
            throw InputError(message: "\(error)")
        }
        for await _ in stops { break }
        await service.shutdown()
        if let failure = anchorFailure.message.withLock({ $0 }) {
            throw InputError(message: "stopped serving: \(failure). `seatledger verify --anchor FILE` names each change; restore the "
                             + "ledger, or make the change with SeatLedger and --anchor")
        }
        return .success
    }
}

/// Why `serve --anchor` stopped itself (the trust configuration changed underneath the anchor).
final class AnchorFailure: Sendable {
    /// The anchor keeper's error, once there is one.
    let message = Mutex<String?>(nil)
}
