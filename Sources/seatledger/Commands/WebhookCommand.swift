import AppStoreModels
import Foundation
import LedgerStorage
import Reports
import SeatLedger
import StandardWebhooks
import WebhookDelivery

/// `seatledger webhook add|list|disable|rotate-secret|deliveries|redeliver`: the endpoints that
/// `seatledger serve` pushes access changes to as signed webhooks (issue #47), and their deliveries.
enum WebhookCommand: Command {
    static let name = "webhook"
    static let summary = "signed webhooks of access changes: add (secret printed once), list, disable, rotate-secret, deliveries, redeliver"
    static let types = Option<[String]>(repeating: "types", value: "T,…", help: """
        (add) the messages it receives: access.changed (default), apple.notification;
        comma-separated or repeated
        """, completion: .words(WebhookMessageType.all))
    static let allowHTTPLoopback = Flag("allow-http-loopback", help: "(add) accept http:// to this machine (127.0.0.1, ::1, localhost), for testing")
    static let grace = Option<Int64>("grace", value: "DURATION", help: "(rotate-secret) how long the old secret still signs: 30s, 15m, 24h, 7d (default 24h)",
                                     default: 24 * 3_600_000, parse: .duration)
    static let endpoint = Option<String?>("endpoint", value: "ID", help: "(deliveries) only the deliveries to this endpoint", completion: .none)
    static let failed = Flag("failed", help: "(deliveries) only those whose retries are used up")
    static let since = Option<EpochMillis?>("since", value: "T", help: "(deliveries, redeliver) only those queued at or after T (7d: seven days ago)",
                                            parse: Clocks.moment)
    static let limit = Option<Int>("limit", value: "N", help: "(deliveries) at most N, newest first (default 50)", default: 50, parse: .positiveInteger)
    static let attempts = Flag("attempts", help: "(deliveries) each delivery's attempts: time, status, latency, error, answer")
    static let options: [any DeclaredOption] = LedgerLocation.options + [
        types, allowHTTPLoopback, grace, endpoint, failed, since, limit, attempts, Flag.json,
    ]
    static let actions = ["add", "list", "disable", "rotate-secret", "deliveries", "redeliver"]
    static let examples = [
        "seatledger webhook add https://app.example.com/hooks/seats --types access.changed,apple.notification --db ledger.sqlite",
        "seatledger webhook deliveries --failed --attempts --db ledger.sqlite",
    ]
    static let help = """
    Usage: seatledger webhook add URL [--types T,…] [--allow-http-loopback] [--db PATH] [--json]
           seatledger webhook add URL [--types T,…] --config FILE --ledger NAME [--ledger NAME …] [--json]
           seatledger webhook list [--db PATH] [--json]
           seatledger webhook disable ID [--db PATH] [--json]
           seatledger webhook rotate-secret ID [--grace DURATION] [--db PATH] [--json]
           seatledger webhook deliveries [--endpoint ID] [--failed] [--since T] [--limit N] [--attempts] [--json]
           seatledger webhook redeliver DELIVERY | --since T [--db PATH] [--json]

    `seatledger serve` POSTs each access change the ledger derives (access.changed), and if asked
    each App Store notification as Apple sent it (apple.notification), to every enabled endpoint
    that receives that type, signed the Standard Webhooks way (webhook-id, webhook-timestamp and
    webhook-signature headers), retrying for three days before it gives up.
    `add` checks the URL (https://; http:// only to this machine, with --allow-http-loopback),
    makes an id (wh_ and 16 hex digits) and a signing secret (whsec_ and 32 random bytes in
    base64), and prints the secret ONCE: give it to the receiver, which checks every message's
    signature with it. With `--config FILE`, `add` takes `--ledger` several times: one endpoint
    (one id, one secret) in each ledger named. `list` shows each endpoint with the fingerprint
    of its secret (the first 8 hex digits of its SHA-256), never the secret. `disable` stops
    deliveries to an endpoint (none are queued for it, pending ones are not sent).
    `rotate-secret` makes a new secret, printed once; the old one still signs (a second
    signature) until --grace has passed, so the receiver can switch without losing a message.
    Endpoints are covered by the record chain: `verify` reports one added, edited or deleted
    outside SeatLedger. `deliveries` lists deliveries newest first; `redeliver` queues one
    delivery (its number in `deliveries`), or every one since T that is not pending, again.

    Options:
    \(OptionHelp.lines(options))
    """

    /// The options each action accepts besides the ledger's and --json (any other is refused, not ignored).
    static let optionsOf: [String: [any DeclaredOption]] = [
        "add": [types, allowHTTPLoopback], "list": [], "disable": [], "rotate-secret": [grace],
        "deliveries": [endpoint, failed, since, limit, attempts], "redeliver": [since],
    ]

    static func maxPositionals(_ positionals: [String]) -> Int? {
        ["list", "deliveries"].contains(positionals.first) ? 1 : 2
    }

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        let action = try arguments.requireAction(actions, command: name)
        for option in options where arguments.contains(option) && !(LedgerLocation.options + [Flag.json]).contains(where: { $0.name == option.name })
            && !(optionsOf[action] ?? []).contains(where: { $0.name == option.name }) {
            let users = actions.filter { (optionsOf[$0] ?? []).contains { $0.name == option.name } }
            throw UsageError(message: "\(option.declaration.spelled) applies to " + users.map { "`webhook \($0)`" }.joined(separator: " and ") + " only")
        }
        let json = arguments[Flag.json]
        switch action {
        case "add": return try add(arguments, json: json)
        case "list": return try list(arguments, json: json)
        case "disable": return try disable(arguments, json: json)
        case "rotate-secret": return try rotate(arguments, json: json)
        case "deliveries": return try deliveries(arguments, json: json)
        default: return try redeliver(arguments, json: json)
        }
    }

    // MARK: Endpoints

    /// The second positional (`webhook disable ID`), or a usage error naming what is missing.
    static func target(_ arguments: Arguments, action: String, noun: String) throws -> String {
        guard arguments.positionals.count == 2 else { throw UsageError(message: "webhook \(action) needs \(noun)") }
        return arguments.positionals[1]
    }

    /// The URL of `webhook add`, checked by ``WebhookEndpointURL``: https://, or http:// to a loopback
    /// address when `allowsLoopbackHTTP`. A usage error names the URL (without credentials) and the reason.
    static func checkedURL(_ text: String, allowsLoopbackHTTP: Bool) throws -> String {
        do {
            return try WebhookEndpointURL(validating: text, allowsLoopbackHTTP: allowsLoopbackHTTP).text
        } catch {
            throw UsageError(message: "webhook URL \(error.description)")
        }
    }

    /// The types of `--types` (default access.changed), once each in the order given; unknown ones refused naming them.
    static func messageTypes(_ values: [String]) throws -> [String] {
        let given = values.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }.map { $0.trimmingCharacters(in: .whitespaces) }
        guard !given.isEmpty else { return [WebhookMessageType.accessChanged] }
        if given.contains("") { throw UsageError(message: "--types has an empty type in \(values.joined(separator: " ")); give \(WebhookMessageType.all.joined(separator: ", "))") }
        let unknown = given.filter { !WebhookMessageType.all.contains($0) }
        guard unknown.isEmpty else {
            throw UsageError(message: "--types: unknown type\(unknown.count == 1 ? "" : "s") \(unknown.joined(separator: ", ")); the types are "
                             + WebhookMessageType.all.joined(separator: ", "))
        }
        var seen = Set<String>()
        return given.filter { seen.insert($0).inserted }
    }

    /// A new endpoint id: `wh_` and 16 lowercase hex digits from the system's cryptographic generator.
    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        let value = UInt64.random(in: .min ... .max, using: &generator)
        let hex = String(value, radix: 16)
        return "wh_" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The fingerprint of a stored secret (``WebhookSecret/fingerprint``); never the secret.
    static func fingerprint(_ stored: String) -> String {
        (try? WebhookSecret(parsing: stored))?.fingerprint ?? "unreadable"
    }

    /// The endpoint `id` of `ledger`, or an input error naming the id and the ledger.
    static func existing(_ id: String, in ledger: Ledger, at location: LedgerLocation) throws -> WebhookEndpointRecord {
        guard let endpoint = try ledger.webhookEndpoint(id: id) else {
            throw InputError(message: "no webhook endpoint \(id) in \(location.description) (see `seatledger webhook list`)")
        }
        return endpoint
    }

    static func add(_ arguments: Arguments, json: Bool) throws -> Terminal.ExitCode {
        let url = try checkedURL(try target(arguments, action: "add", noun: "a URL"), allowsLoopbackHTTP: arguments[allowHTTPLoopback])
        let types = try messageTypes(try arguments[Self.types])
        // One id and one secret in every ledger named (`--config FILE --ledger A --ledger B`).
        let locations = try LedgerLocation.all(arguments)
        let ledgers = try locations.map { try $0.open() }
        let secret = WebhookSecret.generate()
        let now = Clocks.now
        var id = newID()
        while try ledgers.contains(where: { try $0.webhookEndpoint(id: id) != nil }) { id = newID() }
        let record = WebhookEndpointRecord(id: id, url: url, types: types, secret: secret.revealedText, createdAt: now)
        for ledger in ledgers { try ledger.addWebhookEndpoint(record) }
        let names = locations.map { $0.name ?? $0.store.description }
        if json {
            Terminal.json(["id": .string(id), "url": .string(url), "types": .array(types.map(JSONValue.string)),
                           "secret": .string(secret.revealedText), "ledgers": .array(names.map(JSONValue.string))])
        } else {
            Terminal.out("""
                Webhook endpoint \(id) added to \(names.joined(separator: ", ")).
                  url     \(url)
                  types   \(types.joined(separator: ","))
                  secret  \(secret.revealedText)
                The secret is shown only now: give it to the receiver, which checks each message's signature with it.
                `seatledger webhook list` shows its fingerprint (\(secret.fingerprint)), never the secret.
                """)
        }
        return .success
    }

    static func list(_ arguments: Arguments, json: Bool) throws -> Terminal.ExitCode {
        let endpoints = try LedgerLocation(arguments).open(readOnly: true).webhookEndpoints()
        if json {
            Terminal.json(.array(endpoints.map { endpoint in
                ["id": .string(endpoint.id), "url": .string(endpoint.url), "types": .array(endpoint.types.map(JSONValue.string)),
                 "createdAt": .timestamp(endpoint.createdAt), "disabledAt": .timestamp(endpoint.disabledAt),
                 "failingSince": .timestamp(endpoint.failingSince), "secretFingerprint": .string(fingerprint(endpoint.secret)),
                 "previousSecretFingerprint": .optional(endpoint.previousSecret.map(fingerprint)),
                 "previousSecretUntil": .timestamp(endpoint.previousSecretUntil)]
            }))
        } else if endpoints.isEmpty {
            Terminal.out("No webhook endpoints.")
        } else {
            let width = Terminal.width
            for endpoint in endpoints {
                var fields = [endpoint.id, endpoint.url, endpoint.types.joined(separator: ","), "created \(Timestamp.iso8601(endpoint.createdAt))",
                              endpoint.disabledAt.map { "disabled \(Timestamp.iso8601($0))" } ?? "enabled"]
                if let since = endpoint.failingSince { fields.append("failing since \(Timestamp.iso8601(since))") }
                fields.append("secret sha256 \(fingerprint(endpoint.secret))")
                if let previous = endpoint.previousSecret, let until = endpoint.previousSecretUntil, until > Clocks.now {
                    fields.append("old secret \(fingerprint(previous)) signs until \(Timestamp.iso8601(until))")
                }
                Terminal.out(TextTable.fields(fields, maxWidth: width))
            }
        }
        return .success
    }

    static func disable(_ arguments: Arguments, json: Bool) throws -> Terminal.ExitCode {
        let id = try target(arguments, action: "disable", noun: "an endpoint ID (see `seatledger webhook list`)")
        let location = try LedgerLocation(arguments)
        let ledger = try location.open()
        let endpoint = try existing(id, in: ledger, at: location)
        if let disabledAt = endpoint.disabledAt {
            throw InputError(message: "webhook endpoint \(id) is already disabled (since \(Timestamp.iso8601(disabledAt)))")
        }
        let now = Clocks.now
        guard try ledger.disableWebhookEndpoint(id: id, now: now) else {
            throw InputError(message: "webhook endpoint \(id) was disabled or removed meanwhile (see `seatledger webhook list`)")
        }
        if json {
            Terminal.json(["id": .string(id), "disabled": true, "disabledAt": .timestamp(now)])
        } else {
            Terminal.out("Disabled webhook endpoint \(id) (\(endpoint.url)): nothing more is sent to it.")
        }
        return .success
    }

    static func rotate(_ arguments: Arguments, json: Bool) throws -> Terminal.ExitCode {
        let id = try target(arguments, action: "rotate-secret", noun: "an endpoint ID (see `seatledger webhook list`)")
        let grace = try arguments[Self.grace]
        let location = try LedgerLocation(arguments)
        let ledger = try location.open()
        let endpoint = try existing(id, in: ledger, at: location)
        let secret = WebhookSecret.generate()
        let until = Clocks.now + grace
        guard try ledger.rotateWebhookSecret(id: id, newSecret: secret.revealedText, previousUntil: until) else {
            throw InputError(message: "webhook endpoint \(id) was removed meanwhile (see `seatledger webhook list`)")
        }
        let old = fingerprint(endpoint.secret)
        if json {
            Terminal.json(["id": .string(id), "secret": .string(secret.revealedText), "previousSecretFingerprint": .string(old),
                           "previousSecretUntil": .timestamp(until)])
        } else {
            Terminal.out("""
                New secret of webhook endpoint \(id): \(secret.revealedText)
                It is shown only now (its fingerprint is \(secret.fingerprint)). The old secret (\(old)) also signs until \(Timestamp.iso8601(until)).
                """)
        }
        return .success
    }

    // MARK: Deliveries

    static func deliveries(_ arguments: Arguments, json: Bool) throws -> Terminal.ExitCode {
        let location = try LedgerLocation(arguments)
        let ledger = try location.open(readOnly: true)
        let endpointId = try arguments[endpoint]
        if let endpointId { _ = try existing(endpointId, in: ledger, at: location) }
        let records = try ledger.webhookDeliveries(endpointId: endpointId, state: arguments[failed] ? WebhookDeliveryState.failed : nil,
                                                   since: try arguments[since], limit: try arguments[limit])
        let withAttempts = arguments[attempts]
        if json {
            Terminal.json(.array(try records.map { delivery in
                var fields: [String: JSONValue] = [
                    "seq": .int(delivery.seq), "endpoint": .string(delivery.endpointId), "messageId": .string(delivery.messageId),
                    "type": .string(delivery.type), "transitionSeq": .optional(delivery.transitionSeq),
                    "eventPosition": .optional(delivery.eventPosition), "state": .string(delivery.state),
                    "attempts": .int(Int64(delivery.attempts)), "createdAt": .timestamp(delivery.createdAt),
                    "nextAttemptAt": .timestamp(delivery.state == WebhookDeliveryState.pending ? delivery.nextAttemptAt : nil),
                    "lastStatus": .optional(delivery.lastStatus.map(Int64.init)), "lastAttemptAt": .timestamp(delivery.lastAttemptAt),
                    "deliveredAt": .timestamp(delivery.deliveredAt), "lastError": .optional(delivery.lastError),
                ]
                if withAttempts {
                    fields["attemptRecords"] = .array(try ledger.webhookAttempts(deliverySeq: delivery.seq).map { attempt in
                        ["attempt": .int(Int64(attempt.attempt)), "at": .timestamp(attempt.at), "status": .optional(attempt.status.map(Int64.init)),
                         "latencyMs": .int(attempt.latencyMilliseconds), "error": .optional(attempt.error), "snippet": .optional(attempt.snippet)]
                    })
                }
                return .object(fields)
            }))
            return .success
        }
        guard !records.isEmpty else {
            Terminal.out("No deliveries.")
            return .success
        }
        let width = Terminal.width
        for delivery in records {
            var fields = ["#\(delivery.seq)", delivery.endpointId, delivery.type, delivery.state, "attempts \(delivery.attempts)",
                          "queued \(Timestamp.iso8601(delivery.createdAt))"]
            if let status = delivery.lastStatus { fields.append("last HTTP \(status)") }
            if let error = delivery.lastError, delivery.state != WebhookDeliveryState.delivered { fields.append("error \(DisplayText.visible(error))") }
            if delivery.state == WebhookDeliveryState.pending { fields.append("next \(Timestamp.iso8601(delivery.nextAttemptAt))") }
            fields.append(delivery.transitionSeq.map { "transition #\($0)" } ?? delivery.eventPosition.map { "event #\($0)" } ?? delivery.messageId)
            Terminal.out(TextTable.fields(fields, maxWidth: width))
            guard withAttempts else { continue }
            for attempt in try ledger.webhookAttempts(deliverySeq: delivery.seq) {
                var line = ["attempt \(attempt.attempt)", Timestamp.iso8601(attempt.at), attempt.status.map { "HTTP \($0)" } ?? "no answer",
                            "\(attempt.latencyMilliseconds) ms"]
                if let error = attempt.error { line.append("error \(DisplayText.visible(error))") }
                if let snippet = attempt.snippet, !snippet.isEmpty { line.append("answer \(DisplayText.visible(String(snippet.prefix(120))))") }
                Terminal.out("    " + TextTable.fields(line, maxWidth: width.map { $0 - 4 }, indent: 8))
            }
        }
        return .success
    }

    static func redeliver(_ arguments: Arguments, json: Bool) throws -> Terminal.ExitCode {
        let since = try arguments[Self.since]
        let given = arguments.positionals.count == 2 ? arguments.positionals[1] : nil
        guard (given == nil) != (since == nil) else {
            throw UsageError(message: given == nil ? "webhook redeliver needs a DELIVERY number (see `seatledger webhook deliveries`) or --since T"
                                                   : "webhook redeliver takes a DELIVERY number or --since T, not both")
        }
        let ledger = try LedgerLocation(arguments).open()
        let now = Clocks.now
        let queued: Int
        if let given {
            guard let seq = Int64(given.hasPrefix("#") ? String(given.dropFirst()) : given), seq > 0 else {
                throw UsageError(message: "webhook redeliver: DELIVERY is a delivery's number (#12 in `seatledger webhook deliveries`), got \(given)")
            }
            queued = try ledger.redeliverWebhooks(seq: seq, now: now)
            guard queued > 0 else { throw InputError(message: "no webhook delivery #\(seq) (see `seatledger webhook deliveries`)") }
        } else {
            queued = try ledger.redeliverWebhooks(since: since, now: now)
        }
        if json {
            Terminal.json(["queued": .int(Int64(queued))])
        } else {
            Terminal.out(queued == 0 ? "No deliveries to queue again (none since then, or all still pending)."
                         : "Queued \(queued) deliver\(queued == 1 ? "y" : "ies") again; `seatledger serve` sends \(queued == 1 ? "it" : "them") next.")
        }
        return .success
    }
}
