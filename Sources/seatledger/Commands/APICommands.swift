import AppStoreAPI
import AppStoreModels
import Foundation
import LedgerStorage
import Projections
import Reports
import SeatLedger
import SeatLedgerAppStoreAPI

/// Options shared by every command that calls the App Store Server API.
enum APIOptions {
    /// A credential option's text: refused when only white space (an unset shell variable, say),
    /// not taken as "use the environment's".
    static let credential = OptionParser<String> { text in
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw OptionValueError("is empty") }
        return text
    }

    static let issuerId = Option<String?>("issuer-id", value: "ID", help: "App Store Connect issuer id (else $SEATLEDGER_ISSUER_ID, else the credentials file)",
                                          parse: credential)
    static let keyId = Option<String?>("key-id", value: "ID", help: "API key id (else $SEATLEDGER_KEY_ID, else the credentials file)", parse: credential)
    static let privateKey = Option<String?>("private-key", value: "FILE", help: """
        the .p8 key (else $SEATLEDGER_PRIVATE_KEY_FILE, else the credentials file);
        a key readable by group or others gets a warning
        """, parse: credential)
    static let credentials = Option<String?>("credentials", value: "FILE", help: """
        JSON {"issuerId","keyId","privateKeyFile"} (default: the file stored with
        `seatledger api-config --credentials FILE`)
        """, parse: credential)
    static let baseURL = Option<String?>("api-base-url", value: "URL", help: """
        default: $SEATLEDGER_API_BASE_URL, else `api-config --api-base-url`, else
        https://api.storekit-sandbox.apple.com (Sandbox) / https://api.storekit.apple.com
        """, parse: credential)
    static let timeout = Option<Double?>("timeout", value: "SECONDS", help: "per request (default 30)", parse: .seconds(upTo: 600))
    static let maxAttempts = Option<Int?>("max-attempts", value: "N", help: """
        requests per call including retries of 429 (Retry-After honoured), 5xx and
        timeouts (default 5)
        """, parse: OptionParser { text in
            guard let attempts = Int(text), (1...20).contains(attempts) else { throw OptionValueError("must be 1…20, got \(text)") }
            return attempts
        })

    /// The connection options, in the order `--help` lists them (at column 24).
    static let connection: [any DeclaredOption] = [issuerId, keyId, privateKey, credentials, baseURL, timeout, maxAttempts]

    static let recording = """
    Every response, success or error, and every retried attempt is appended to the ledger as an
    `apiResponse` event through the normal ingest path (signatures verified) before anything is
    printed. Credentials are never printed, logged or stored in events. A response body over 4 MiB
    is not read further (a proxy's runaway answer): that attempt fails like a lost connection.
    """

    /// What the credential options say: `--issuer-id`, `--key-id`, `--private-key`, `--credentials`
    /// and `--api-base-url`, each `nil` when not given (the environment and stored settings decide).
    ///
    /// An option given empty is a mistake (an unset shell variable, say), not "use the
    /// environment's": it is refused rather than falling back silently.
    static func credentialOptions(_ arguments: Arguments) throws
        -> (issuerId: String?, keyId: String?, privateKeyFile: String?, credentialsFile: String?, baseURL: String?) {
        (try arguments[issuerId], try arguments[keyId], try arguments[privateKey], try arguments[credentials], try arguments[baseURL])
    }

    /// Builds the connection from the command's options; prints warnings on stderr.
    static func connect(_ arguments: Arguments, ledger: Ledger) throws -> LedgerAPI {
        let given = try credentialOptions(arguments)
        var options = LedgerAPIOptions()
        options.issuerId = given.issuerId
        options.keyId = given.keyId
        options.privateKeyFile = given.privateKeyFile
        options.credentialsFile = given.credentialsFile
        options.baseURL = given.baseURL
        if let seconds = try arguments[timeout] { options.timeout = seconds }
        if let attempts = try arguments[maxAttempts] { options.retry.maximumAttempts = attempts }
        options.clock = { Clocks.now }
        options.log = { Terminal.note($0) }   // retry progress: silenced by --quiet
        do {
            let (api, warnings) = try LedgerAPI.connect(ledger, options: options)
            for warning in warnings { Terminal.note(warning) }
            return api
        } catch let error as APICredentialsError {
            throw UsageError(message: error.message)
        } catch let error as APIUsageError {
            throw UsageError(message: error.message)
        }
    }
}

/// `seatledger backfill --since T [--until T] [--only-failures]`: Get Notification History → ingest.
enum BackfillCommand: Command {
    static let name = "backfill"
    static let summary = "recover missed notifications from Apple's notification history (idempotent, resumable)"
    static let since = Option<EpochMillis?>("since", value: "T", help: "window start (7d: seven days ago)", parse: Clocks.moment)
    static let until = Option<EpochMillis?>("until", value: "T", help: "window end (default: now)\n\(Clocks.forms)", parse: Clocks.moment)
    static let onlyFailures = Flag("only-failures", help: "only notifications that never reached your server")
    static let restart = Flag("restart", help: "ignore earlier runs' coverage and fetch the window again")
    static let progress = Flag.progress.help("pages and events so far on stderr even when it is not a terminal")
    static let options: [any DeclaredOption] = LedgerLocation.options + [since, until, onlyFailures, restart, progress]
        + APIOptions.connection + [Flag.json]
    static let exitStatuses: [ExitStatus] = [
        .success, .error, .quarantined,
        ExitStatus(.interrupted, "stopped by SIGINT/SIGTERM between pages (its place is saved: re-run to continue)"),
    ]
    static let examples = ["seatledger backfill --db ledger.sqlite --since 7d", "seatledger backfill --db ledger.sqlite --since 2026-11-01 --only-failures"]
    static let help = """
    Usage: seatledger backfill --since T [--until T] [--only-failures] [--restart] [--db PATH] [--json]

    Pages through Get Notification History (20 per page) for [since, until) and ingests every
    notification; ones already in the ledger append nothing, so the report's "new" count is
    exactly the notifications that had been missed. Apple keeps 180 days of history in
    Production and 30 in Sandbox; an older --since is moved forward with a note.

    Idempotent and resumable: the ledger remembers which windows were fetched to the last page
    (and the next page's token while paging), so running the same backfill again requests
    nothing and appends nothing, and an interrupted run continues from the next page. Then
    `seatledger diff REF --known-at BEFORE --known-at AFTER` shows what the new notifications
    changed (the report prints BEFORE).

    \(APIOptions.recording)

    Options:
    \(OptionHelp.lines(options, column: 24))
    Backfill exits 2 when Apple's answer stopped it (progress so far is kept; rerun to resume).
    """

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        guard arguments.positionals.isEmpty else { throw UsageError(message: "backfill takes no positional arguments") }
        let now = Clocks.now
        let since = try arguments.required(Self.since)
        let until = try arguments[Self.until]
        let ledger = try LedgerLocation(arguments).open()
        let api = try APIOptions.connect(arguments, ledger: ledger)
        let knownBefore = ledger.recordingTime() - 1   // the recording clock: events of this run are later
        let report: BackfillReport
        do {
            var backfill = NotificationBackfill(api: api)
            let stop = StopSignal(stopping: "after the page in hand; its place is saved: re-run to continue")
            // Asked before each page request: the page count and the events appended so far.
            let progress = ProgressReporter(label: "backfill", arguments: arguments)
            defer { progress.finish() }
            let eventsBefore = try ledger.eventCount()
            var pages: Int64 = 0
            backfill.shouldStop = {
                if pages > 0, progress.enabled {
                    let appended = ((try? ledger.eventCount()) ?? eventsBefore) - eventsBefore
                    progress.report(count: pages, unit: "pages", detail: "\(appended) events appended; requesting page \(pages + 1)")
                }
                pages += 1
                return stop.isStopped
            }
            report = try backfill.run(since: since, until: until, onlyFailures: arguments[onlyFailures],
                                      restart: arguments[restart], now: now)
        } catch let error as APIUsageError {
            throw UsageError(message: error.message)
        }
        let knownAfter = ledger.recordingTime()
        let groups = try affectedGroups(report, ledger: ledger)
        if arguments[Flag.json] {
            var json = report.json.objectValue ?? [:]
            json["knownBefore"] = .timestamp(knownBefore)
            json["knownAfter"] = .timestamp(knownAfter)
            json["groups"] = .array(groups.map(JSONValue.string))
            Terminal.json(.object(json))
        } else {
            Terminal.out(text(report, groups: groups, knownBefore: knownBefore, knownAfter: knownAfter))
        }
        if report.failure != nil { return .failure }
        if report.interrupted { return .interrupted }
        return report.quarantined > 0 ? .quarantined : .success
    }

    /// Group keys the new notifications belong to.
    static func affectedGroups(_ report: BackfillReport, ledger: Ledger) throws -> [String] {
        var keys = Set<String>()
        for item in report.newNotifications {
            keys.formUnion(try ledger.groupKeys(ofEventAt: item.position))
        }
        return keys.sorted()
    }

    static func text(_ report: BackfillReport, groups: [String], knownBefore: EpochMillis, knownAfter: EpochMillis) -> String {
        var lines = ["Backfill \(Timestamp.iso8601(report.since)) → \(Timestamp.iso8601(report.until))"
            + (report.onlyFailures ? " (only failed deliveries)" : "")]
        for note in report.notes { lines.append("  note: \(note)") }
        if report.resumed { lines.append("  resumed an interrupted run from its next page") }
        if !report.windows.isEmpty {
            lines.append("  \(report.pages) page\(report.pages == 1 ? "" : "s"), \(report.returned) notification\(report.returned == 1 ? "" : "s") returned: "
                + "\(report.newNotifications.count) new (missed), \(report.alreadyKnown) already in the ledger"
                + (report.quarantined > 0 ? ", \(report.quarantined) quarantined" : ""))
        }
        for item in report.newNotifications {
            let kind = [item.type, item.subtype].compactMap { $0 }.joined(separator: "/")
            lines.append("  + \(item.notificationUUID) \(kind.isEmpty ? "?" : kind) signed \(Timestamp.iso8601(item.signedDate)) (position \(item.position))")
        }
        for reason in report.quarantineReasons { lines.append("  ! \(reason)") }
        if report.interrupted {
            lines.append("Interrupted (SIGINT/SIGTERM) between pages. Progress is saved; run the same backfill again to resume.")
        }
        if let failure = report.failure {
            lines.append("Stopped: \(failure). Progress is saved; run the same backfill again to resume.")
        }
        if !groups.isEmpty {
            lines.append("Groups changed: \(groups.joined(separator: ", "))")
            lines.append("See what changed: seatledger diff \(groups[0]) --known-at \(Timestamp.iso8601(knownBefore)) --known-at \(Timestamp.iso8601(knownAfter))")
        }
        return lines.joined(separator: "\n")
    }
}

/// `seatledger reconcile REF`: refresh a group from Apple, then print the diff against Apple.
enum ReconcileCommand: Command {
    static let name = "reconcile"
    static let summary = "ask Apple about a group (statuses, seats, groups, members), record it, print the diff"
    static let withHistory = Flag("with-history", help: "also page through Get Transaction History v2")
    static let asOf = Clocks.asOf.help("moment of the comparison (default: now)\n\(Clocks.forms)")
    static let options: [any DeclaredOption] = LedgerLocation.options + [withHistory, asOf] + APIOptions.connection + [Flag.json]
    static let exitStatuses: [ExitStatus] = [
        .success, ExitStatus(.findings, "the ledger and Apple differ (the differences are printed)"), .error,
        ExitStatus(.quarantined, "some responses were quarantined"),
    ]
    static let examples = ["seatledger reconcile 2000000000000001 --db ledger.sqlite"]
    static let help = """
    Usage: seatledger reconcile REF [--with-history] [--as-of T] [--db PATH] [--json]

    Calls Get All Subscription Statuses for the group's purchaser (REF may be any identifier of
    the group, or a transaction id the ledger does not know yet), optionally every page of Get
    Transaction History v2 (--with-history: recovers every transaction of the period, e.g. a
    missed seat addition), Get Seat Info (skipped for Apple-hosted groups), Get Customer Groups
    and every page of Get Group Members for each group id (the sandbox placeholder group is
    skipped). Then prints our projection against Apple's latest view, like
    `seatledger diff REF --against-apple`.

    \(APIOptions.recording)

    Options:
    \(OptionHelp.lines(options, column: 24))
    Reconcile exits 0 when ours and Apple's agree, 1 when they differ, 2 when a call failed, 3
    when a response was quarantined.
    """

    static func maxPositionals(_ positionals: [String]) -> Int? { 1 }

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        guard arguments.positionals.count == 1 else { throw UsageError(message: "reconcile needs exactly one REF") }
        let reference = arguments.positionals[0]
        let now = try arguments[asOf] ?? Clocks.now
        let ledger = try LedgerLocation(arguments).open()
        // A REF the ledger does not know is asked about as a transaction id, and every answer is
        // recorded for good: refuse one that cannot be one (Apple's are digits) before calling.
        if try ledger.groupKeys(for: reference).isEmpty, reference.isEmpty || !reference.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            throw InputError(message: "no group or member matches \(reference), and it is not a transaction id (Apple's are digits): nothing to ask Apple")
        }
        let api = try APIOptions.connect(arguments, ledger: ledger)
        // Without --as-of the comparison is as of when it is made, after the calls it records.
        let report = try GroupReconciler(api: api).run(reference, withHistory: arguments[withHistory],
                                                       now: arguments.contains(asOf) ? now : nil)
        if arguments[Flag.json] {
            Terminal.json(report.json)
        } else {
            var lines = ["Reconcile \(reference)" + (report.purchaserOriginalTransactionId.map { " (purchaser \($0))" } ?? "")]
            for call in report.calls { lines.append("  \(call.isSuccess ? "✓" : "✗") \(call.summary)") }
            for note in report.notes { lines.append("  note: \(note)") }
            for item in report.quarantined { lines.append("  ! \(item)") }
            lines.append("")
            lines.append(report.comparison?.text ?? "No comparison: the ledger has no group for \(reference).")
            Terminal.out(lines.joined(separator: "\n"))
        }
        if !report.failedCalls.isEmpty || report.comparison == nil { return .failure }
        if !report.quarantined.isEmpty { return .quarantined }
        return (report.comparison?.differences.isEmpty ?? true) ? .success : .findings
    }
}

/// `seatledger seats claim|unclaim|associate|info|requests`.
enum SeatsCommand: Command {
    static let name = "seats"
    static let summary = "claim, unclaim and associate developer-hosted seats through Apple (recorded)"
    static let appTransactionId = Option<String?>("app-transaction-id", value: "X",
                                                  help: "the member's appTransactionId (claim: optional; associate: required)")
    static let memberRef = Option<String?>("member-ref", value: "R", help: "your member id, recorded in the event's context and shown in reports")
    static let requestId = Option<String?>("request-id", value: "ID", help: "claim: resume this stored requestIdentifier")
    static let state = Option<String?>("state", value: "S", help: "requests: only this state",
                                       parse: .oneOf([ClaimRequestRecord.pending, ClaimRequestRecord.claimed, ClaimRequestRecord.failed]))
    static let asOf = Clocks.asOf.help("moment the guards read the projection at (default: now)\n\(Clocks.forms)")
    /// The seat options, listed at column 26 in `--help`.
    static let seatOptions: [any DeclaredOption] = [appTransactionId, memberRef, requestId, state, asOf]
    static let options: [any DeclaredOption] = LedgerLocation.options + seatOptions + APIOptions.connection + [Flag.json]
    static let actions = ["claim", "unclaim", "associate", "info", "requests"]
    static let examples = ["seatledger seats claim 2000000000000001 --member-ref app-user-42 --db ledger.sqlite",
                           "seatledger seats requests --db ledger.sqlite --state pending"]
    static let help = """
    Usage: seatledger seats claim REF [--app-transaction-id X] [--member-ref R] [--request-id ID] [--db PATH] [--json]
           seatledger seats unclaim REF SEAT_CLAIM_ID [--db PATH] [--json]
           seatledger seats associate REF SEAT_CLAIM_ID --app-transaction-id X [--db PATH] [--json]
           seatledger seats info REF [--as-of T] [--db PATH] [--json]
           seatledger seats requests [REF] [--state pending|claimed|failed] [--db PATH] [--json]

    claim: refuses (exit 2, no request sent) when the projection shows the group is not
    developer-hosted, its subscription is not active, it has no available seat, or the member
    already holds an active claim. Otherwise it writes a new requestIdentifier to the ledger
    BEFORE calling Claim Seat. If that run dies or gets no answer, the same `seats claim` (same
    REF and --member-ref, else --app-transaction-id) finds the unfinished request and reuses its
    requestIdentifier, so Apple returns the same seatClaimId and never takes a second seat;
    --request-id resumes one request explicitly.
    unclaim: Unclaim Seat (revoke the member's access in your app at the same time). If an attempt
    got no answer and the retry gets SeatClaimIdNotFoundError, Get Seat Info (recorded) checks the
    claim: no longer listed means the lost attempt took effect (success, with a note).
    associate: Associate Seat (links the claim to the member's appTransactionId; access unchanged).
    info: Get Seat Info.  requests: the stored Claim Seat requests (no API call).

    The library also refuses Extend a Subscription Renewal Date (4030028), Send Consumption
    Information and Set App Account Token (4000227) for ASSIGNED transactions.

    \(APIOptions.recording)

    Options:
    \(OptionHelp.lines(LedgerLocation.options + seatOptions, column: 26))
    \(OptionHelp.lines(APIOptions.connection + [Flag.json], column: 24))
    """

    static func maxPositionals(_ positionals: [String]) -> Int? {
        switch positionals.first {
        case "requests", "claim", "info": return 2
        case "unclaim", "associate": return 3
        default: return 1
        }
    }

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        guard let action = arguments.positionals.first else {
            throw UsageError(message: "expected `seats claim|unclaim|associate|info|requests …`")
        }
        let rest = Array(arguments.positionals.dropFirst())
        let now = try arguments[asOf] ?? Clocks.now
        let json = arguments[Flag.json]
        if action == "requests" {
            guard rest.count <= 1 else { throw UsageError(message: "seats requests takes at most one REF") }
            let state = try arguments[Self.state]
            let ledger = try LedgerLocation(arguments).open(readOnly: true)
            let otid = try rest.first.map { try ledger.groupState($0, asOf: now).purchaserOriginalTransactionId ?? $0 }
            let records = try ledger.claimRequests(originalTransactionId: otid, state: state)
            if json { Terminal.json(.array(records.map(\.json))) } else if records.isEmpty { Terminal.out("No Claim Seat requests.") } else {
                let width = Terminal.width
                Terminal.out(records.map {
                    TextTable.fields([$0.requestIdentifier, $0.state, "group \($0.originalTransactionId)",
                                      "member \(DisplayText.visible($0.memberRef ?? $0.appTransactionId ?? "-"))", "attempts \($0.attempts)",
                                      $0.seatClaimId.map { "claim \($0)" } ?? "", $0.lastError.map { "last: \($0)" } ?? ""], maxWidth: width)
                }.joined(separator: "\n"))
            }
            return .success
        }
        let expected: Int
        switch action {
        case "claim", "info": expected = 1
        case "unclaim", "associate": expected = 2
        default: throw UsageError(message: "unknown seats action '\(action)' (expected claim, unclaim, associate, info or requests)")
        }
        guard rest.count == expected else {
            throw UsageError(message: "seats \(action) needs \(expected == 1 ? "REF" : "REF SEAT_CLAIM_ID")")
        }
        if action == "associate", !arguments.contains(appTransactionId) {
            throw UsageError(message: "seats associate needs --app-transaction-id")
        }
        let ledger = try LedgerLocation(arguments).open()
        let api = try APIOptions.connect(arguments, ledger: ledger)
        let operations = SeatOperations(api: api)
        let outcome: SeatOperationResult
        do {
            switch action {
            case "claim":
                // Recorded for good and shown in reports: nothing `DisplayText` would have to escape
                // (an escape sequence, a line break or a bidirectional override in a member's name).
                for option in [memberRef, requestId, appTransactionId] {
                    if let value = try arguments[option], DisplayText.visible(value) != value {
                        throw UsageError(message: "\(option.declaration.spelled) holds a control character (\(DisplayText.visible(value))); give plain text")
                    }
                }
                // --request-id resumes a stored request; an unknown one (a typo) must not start a second claim.
                if let id = try arguments[requestId] {
                    guard let stored = try ledger.claimRequest(id) else {
                        throw InputError(message: "no stored Claim Seat request \(id.isEmpty ? "\"\"" : id) (see `seatledger seats requests`); omit --request-id to start a new claim")
                    }
                    // Resuming sends the stored identifier: it must be this group's, for this member.
                    let purchaser = try ledger.groupState(rest[0], asOf: now).purchaserOriginalTransactionId
                    guard stored.originalTransactionId == purchaser else {
                        throw UsageError(message: "request \(id) is a claim in group \(stored.originalTransactionId), not in \(rest[0])")
                    }
                    if let member = try arguments[memberRef], stored.memberRef != member {
                        throw UsageError(message: "request \(id) is for member \(stored.memberRef.map(DisplayText.visible) ?? "(none)"), not \(DisplayText.visible(member))")
                    }
                }
                outcome = try operations.claim(rest[0], appTransactionId: try arguments[appTransactionId],
                                               memberRef: try arguments[memberRef], requestIdentifier: try arguments[requestId],
                                               now: now)
            case "unclaim":
                outcome = try operations.unclaim(rest[0], seatClaimId: rest[1], now: now)
            case "associate":
                outcome = try operations.associate(rest[0], seatClaimId: rest[1], appTransactionId: try arguments[appTransactionId] ?? "",
                                                   now: now)
            default:
                outcome = try operations.info(rest[0], now: now)
            }
        } catch let refusal as SeatClaimRefusal {
            if json { Terminal.json(["result": "refused", "code": .string(refusal.code), "message": .string(refusal.message)]) }
            Terminal.err("seatledger seats \(action): refused: \(refusal.message)")
            return .failure
        } catch let error as GroupNotFound {
            throw UsageError(message: error.description)
        }
        if json {
            Terminal.json(outcome.json)
        } else {
            var lines: [String] = outcome.notes.map { "note: \($0)" }
            if outcome.succeeded {
                switch action {
                case "claim":
                    lines.append("Claimed seat \(outcome.seatClaimId ?? "?") in group \(outcome.originalTransactionId) "
                        + "(requestIdentifier \(outcome.claimRequest?.requestIdentifier ?? "?"))")
                case "unclaim": lines.append("Unclaimed seat \(rest[1]) in group \(outcome.originalTransactionId); revoke the member's access in your app.")
                case "associate": lines.append("Associated seat \(rest[1]) with appTransactionId \(try arguments[appTransactionId] ?? "")")
                default:
                    let body = outcome.result.body
                    lines.append("Apple: total \(body?["totalSeatCount"]?.int64Value.map(String.init) ?? "?"), "
                        + "available \(body?["availableSeatCount"]?.int64Value.map(String.init) ?? "?"), "
                        + Self.claimsText((body?["assignedSeatClaimIds"]?.arrayValue ?? []).compactMap(\.stringValue)))
                }
            }
            for item in outcome.quarantined { lines.append("! \(item)") }
            if !lines.isEmpty { Terminal.out(lines.joined(separator: "\n")) }
        }
        if !outcome.succeeded {
            Terminal.err("seatledger seats \(action): \(outcome.problem ?? outcome.result.summary)")
            return .failure
        }
        return outcome.quarantined.isEmpty ? .success : .quarantined
    }

    /// "claims a, b", or "no claims" for an empty list (not a dangling "claims ").
    static func claimsText(_ claims: [String]) -> String {
        claims.isEmpty ? "no claims" : "claims " + claims.joined(separator: ", ")
    }
}

/// `seatledger api-config`: where the API credentials file is, base URL override, backfill progress.
enum APIConfigCommand: Command {
    static let name = "api-config"
    static let summary = "show or set the App Store Server API credentials file and base URL"
    static let credentials = APIOptions.credentials.help("store this credentials file's path")
    static let baseURL = APIOptions.baseURL.help("store a base URL override")
    static let unsetCredentials = Flag("unset-credentials", help: "forget the stored credentials file")
    static let unsetBaseURL = Flag("unset-base-url", help: "forget the stored base URL")
    static let options: [any DeclaredOption] = LedgerLocation.options + [credentials, baseURL, unsetCredentials, unsetBaseURL, Flag.json]
    static let actions = ["show"]
    static let examples = ["seatledger api-config --db ledger.sqlite --credentials /etc/seatledger/api.json"]
    static let help = """
    Usage: seatledger api-config [--credentials FILE] [--api-base-url URL] [--unset-credentials] [--unset-base-url] [--db PATH] [--json]

    Stores the PATH of a JSON credentials file ({"issuerId", "keyId", "privateKeyFile"} or
    "privateKey" inline) in the ledger's configuration; the file is checked first and never
    copied. Flags and $SEATLEDGER_ISSUER_ID / $SEATLEDGER_KEY_ID / $SEATLEDGER_PRIVATE_KEY_FILE
    win over it field by field. --api-base-url stores a host override (a proxy). Without options
    it shows the settings and the backfill coverage.

    Options:
    \(OptionHelp.lines(options, column: 24))
    """

    static func maxPositionals(_ positionals: [String]) -> Int? { positionals.first == "show" ? 1 : 0 }

    /// `url` with its user information (a password, a token) replaced by `***` (for display only).
    static func withoutPassword(_ url: String) -> String { LedgerAPI.withoutUserInformation(url) }

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        guard arguments.positionals.isEmpty || arguments.positionals == ["show"] else {
            throw UsageError(message: "api-config takes options only")
        }
        if arguments.contains(credentials), arguments[unsetCredentials] {
            throw UsageError(message: "give --credentials or --unset-credentials, not both")
        }
        if arguments.contains(baseURL), arguments[unsetBaseURL] {
            throw UsageError(message: "give --api-base-url or --unset-base-url, not both")
        }
        let ledger = try LedgerLocation(arguments).open()
        if let file = try arguments[credentials] {
            do {
                for warning in try ledger.setAPICredentialsFile(file) { Terminal.err(warning) }
            } catch let error as APICredentialsError {
                throw UsageError(message: error.message)
            }
        }
        if arguments[unsetCredentials] { try ledger.storeSetting(LedgerAPISettings.credentialsFile, "") }
        if let url = try arguments[baseURL] {
            do { try ledger.setAPIBaseURL(url) } catch let error as APIUsageError { throw UsageError(message: error.message) }
        }
        if arguments[unsetBaseURL] { try ledger.storeSetting(LedgerAPISettings.baseURL, "") }
        let values = try ledger.settings()
        func nonEmpty(_ key: String) -> String? { values[key].flatMap { $0.isEmpty ? nil : $0 } }
        let credentials = nonEmpty(LedgerAPISettings.credentialsFile)
        let stored = nonEmpty(LedgerAPISettings.baseURL).map(Self.withoutPassword)
        // What a call would use, in the order `LedgerAPI.connect` looks (a command's own
        // --api-base-url aside): the environment, the stored value, the environment's default.
        let environment = ProcessInfo.processInfo.environment
        func fromEnvironment(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let environmentURL = fromEnvironment(LedgerAPISettings.baseURLVariable).map(Self.withoutPassword)
        let effective = environmentURL ?? stored ?? AppStoreAPIPaths.baseURL(for: ledger.configuration.environment)
        let baseURLSource = environmentURL != nil ? "$\(LedgerAPISettings.baseURLVariable)" : stored != nil ? "stored" : "default"
        let credentialVariables = [APICredentials.issuerIdVariable, APICredentials.keyIdVariable, APICredentials.privateKeyFileVariable]
        let credentialsFromEnvironment = credentialVariables.allSatisfy { fromEnvironment($0) != nil }
        let cursor = try NotificationBackfill.cursor(of: ledger)
        if arguments[Flag.json] {
            var json = cursor.json.objectValue ?? [:]
            json["version"] = nil
            Terminal.json([
                "credentialsFile": .optional(credentials), "apiBaseURL": .optional(stored), "effectiveBaseURL": .optional(effective),
                "effectiveBaseURLSource": .string(baseURLSource),
                "credentialsSource": .string(credentialsFromEnvironment ? "environment" : credentials != nil ? "stored file" : "none"),
                "environment": .string(ledger.configuration.environment.rawValue), "backfill": .object(json),
            ])
        } else {
            var lines = [
                "Credentials:      " + (credentialsFromEnvironment ? "from the environment (\(credentialVariables.map { "$" + $0 }.joined(separator: ", ")))"
                    : credentials.map { "file \($0)" } ?? "(not set)"),
                "Base URL:         \(effective ?? "(none for \(ledger.configuration.environment.rawValue))") (\(baseURLSource))",
                "Backfill covered: " + (cursor.coveredAll.isEmpty ? "nothing yet"
                    : cursor.coveredAll.map { "\(Timestamp.iso8601($0.start)) → \(Timestamp.iso8601($0.end))" }.joined(separator: ", ")),
            ]
            if !cursor.coveredFailures.isEmpty {
                lines.append("  failures only:  " + cursor.coveredFailures.map { "\(Timestamp.iso8601($0.start)) → \(Timestamp.iso8601($0.end))" }.joined(separator: ", "))
            }
            if let progress = cursor.inProgress {
                lines.append("  interrupted:    \(Timestamp.iso8601(progress.startDate)) → \(Timestamp.iso8601(progress.endDate)) after \(progress.pages) page(s); the next backfill resumes it")
            }
            Terminal.out(lines.joined(separator: "\n"))
        }
        return .success
    }
}
