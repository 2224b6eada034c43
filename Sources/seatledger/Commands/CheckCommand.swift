import AppStoreModels
import Foundation
import JWSVerification
import LedgerEvents
import LedgerIntake
import LedgerStorage
import SeatLedger

/// `seatledger check`: verify standalone JWS files without appending anything.
enum CheckCommand: Command {
    static let name = "check"
    static let summary = "verify standalone JWS files (notification, StoreKit input, transaction or renewal info) without appending"
    static let kind = Option<SignedPayloadKind?>(
        "kind", value: "K", help: """
        notification, transaction or renewal: check the JWS as that kind alone
        (default: a notification, or a StoreKit input as ingest reads it)
        """, completion: .words(["notification", "transaction", "renewal"]), parse: OptionParser { text in
            guard let kind = SignedPayloadKind(rawValue: text) else { throw OptionValueError("must be notification, transaction or renewal, got \(text)") }
            return kind
        })
    static let rootCert = InitCommand.rootCert.help("trust this root instead of the ledger's (repeatable)")
    static let bundleId = InitCommand.bundleId.help("expected bundle id (default: the ledger's)")
    static let environment = InitCommand.environment.help("expected environment (default: the ledger's)")
    static let appAppleId = InitCommand.appAppleId.help("expected app Apple id (Production; default: the ledger's)")
    static let options: [any DeclaredOption] = LedgerLocation.options + [
        kind, rootCert, bundleId, environment, appAppleId,
        PinnedRoots.option.help("""
            pin a trusted root by its SHA-256 fingerprint (repeatable; default
            $SEATLEDGER_TRUSTED_ROOTS, comma-separated): a ledger holding any other
            root is refused (exit 2), naming it; with --root-cert, each given root
            must be pinned
            """),
        Flag.json,
    ]
    static let exitStatuses: [ExitStatus] = [.success, ExitStatus(.findings, "a file was refused (its reason is printed)"), .error]
    static let examples = ["seatledger check body.json --db ledger.sqlite",
                           "seatledger check purchase.json --db ledger.sqlite   # {\"storeKit\": {\"userId\": …, \"signedTransaction\": …}}",
                           "seatledger check payload.jws --kind transaction --root-cert AppleRootCA-G3.cer --bundle-id com.example.reps --environment Production --app-apple-id 1234567890"]
    static let help = """
    Usage: seatledger check FILE … [--kind notification|transaction|renewal] [--db PATH] [--json]
           seatledger check FILE … --root-cert FILE --bundle-id ID --environment ENV [--app-apple-id N]

    Each FILE is a compact JWS, the exact body Apple posts ({"signedPayload": "<JWS>"}), or a
    StoreKit input as the app server sends it ({"storeKit": {"userId": "u-42", "signedTransaction"
    or "signedAppTransaction": "<JWS>"}}). Runs every check ingest applies to a signed payload —
    compact JWS form, alg ES256, x5c chain to a configured root at the payload's signedDate (an
    AppTransaction's receiptCreationDate), Apple OIDs, the ES256 signature, then bundle id,
    environment (and app Apple id in Production) — and prints the verdict per file. Nothing is
    written. Without --kind, a StoreKit input, or a bare JWS whose payload is a StoreKit
    transaction or AppTransaction, is checked as `ingest FILE` reads it, and the verdict says
    which it is, its user id and the identities it links (appTransactionId,
    originalTransactionId, appAccountToken). Trust comes from the ledger (--db): its roots,
    bundle id, environment and app Apple id, each of the last three replaced by
    --bundle-id/--environment/--app-apple-id when given. With --root-cert the ledger is not read,
    and --bundle-id and --environment are required.
    Exit 0 when every file verifies, 1 when any is refused.

    Options:
    \(OptionHelp.lines(options, column: 22))
    """

    static func maxPositionals(_ positionals: [String]) -> Int? { nil }

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        // Validated like `init` does, whether or not --root-cert is given.
        _ = try arguments[environment]
        _ = try arguments[appAppleId]
        guard !arguments.positionals.isEmpty else { throw UsageError(message: "expected at least one FILE") }
        let kind = try arguments[Self.kind] ?? .notification
        // Every FILE must be readable before any verdict is printed.
        for path in arguments.positionals { try FileChecks.requireReadable(path) }
        let decoder = try makeDecoder(arguments)
        var results: [JSONValue] = []
        var allOK = true
        for path in arguments.positionals {
            let data = try FileChecks.read(path)
            // Without --kind, a StoreKit input is checked as `ingest FILE` would take it.
            if !arguments.contains(Self.kind), let storeKit = decoder.checkStoreKit(data, source: path) {
                let (result, ok) = storeKitVerdict(storeKit, path: path, json: arguments[Flag.json])
                results.append(result)
                allOK = allOK && ok
                continue
            }
            let jws: String
            do {
                jws = try signedPayload(in: data)
            } catch let problem as UsageError {
                allOK = false
                results.append(["file": .string(path), "verified": false, "errorCode": "not_jws", "reason": .string(problem.message)])
                if !arguments[Flag.json] { Terminal.out("\(path): REFUSED (not_jws) \(problem.message)") }
                continue
            }
            switch decoder.check(jws: jws, kind: kind) {
            case .success(let payload):
                results.append(["file": .string(path), "verified": true, "payload": payload])
                if !arguments[Flag.json] { Terminal.out("\(path): verified") }
            case .failure(let rejection):
                allOK = false
                results.append(["file": .string(path), "verified": false, "errorCode": .string(rejection.code.rawValue),
                                "reason": .string(rejection.reason)])
                if !arguments[Flag.json] { Terminal.out("\(path): REFUSED (\(rejection.code)) \(rejection.reason)") }
            }
        }
        if arguments[Flag.json] { Terminal.json(.array(results)) }
        return allOK ? .success : .findings
    }

    /// The verdict on a StoreKit input (printed unless `json`): its result object and whether it verified.
    private static func storeKitVerdict(_ checked: Result<NewEvent, IngestRejection>, path: String, json: Bool) -> (JSONValue, Bool) {
        switch checked {
        case .success(let event):
            let form = StoreKitForm(rawValue: event.type ?? "") ?? .transaction
            let links = StoreKitLinks(identifiers: event.identifiers)
            if !json { Terminal.out("\(path): verified: \(form.displayName); \(links.text)") }
            return (["file": .string(path), "verified": true, "kind": .string(event.kind.rawValue), "form": .string(form.rawValue),
                     "eventId": .string(event.eventId), "linked": links.json, "payload": event.decoded], true)
        case .failure(let rejection):
            if !json { Terminal.out("\(path): REFUSED (\(rejection.code)) \(rejection.reason)") }
            return (["file": .string(path), "verified": false, "errorCode": .string(rejection.code.rawValue), "reason": .string(rejection.reason)], false)
        }
    }

    /// The JWS in a file: the file itself (a compact JWS, surrounding blanks ignored), or the
    /// `signedPayload` of a JSON object: the exact body Apple posts, `{"signedPayload":"<JWS>"}`.
    static func signedPayload(in data: Data) throws -> String {
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("{") else { return text }
        guard let object = try? JSONValue.parse(Data(text.utf8)) else {
            throw UsageError(message: "starts with { but is not valid JSON (expected a JWS, or {\"signedPayload\": \"<JWS>\"} as Apple posts it)")
        }
        guard case .string(let jws)? = object["signedPayload"] else {
            throw UsageError(message: "a JSON object without a \"signedPayload\" string (expected a JWS, or the body Apple posts, "
                             + "{\"signedPayload\": \"<JWS>\"}; an apiResponse envelope is checked by `seatledger record`)")
        }
        return jws
    }

    private static func makeDecoder(_ arguments: Arguments) throws -> MessageDecoder {
        let roots = try arguments[rootCert]
        guard !roots.isEmpty else {
            // The ledger's roots, with whichever of its bundle id, environment and app Apple id
            // the options override (an override must never be dropped: "does this belong to app X?").
            let opened = try LedgerLocation(arguments).open(readOnly: true)
            try PinnedRoots.require(arguments, ledger: opened, doing: "check")
            let ledger = opened.decoder
            let stored = ledger.configuration
            guard arguments.contains(bundleId) || arguments.contains(environment) || arguments.contains(appAppleId) else { return ledger }
            let environment = try arguments[Self.environment] ?? stored.environment
            let appAppleId = try arguments[Self.appAppleId] ?? stored.appAppleId
            guard environment != .production || appAppleId != nil else {
                throw UsageError(message: "--environment Production also needs --app-apple-id N (the ledger has none)")
            }
            let configuration = try LedgerConfiguration(bundleId: try arguments[Self.bundleId] ?? stored.bundleId,
                                                        environment: environment, appAppleId: appAppleId)
            return MessageDecoder(verifier: ledger.verifier, configuration: configuration)
        }
        let environment = try arguments.required(Self.environment)
        let bundleId = try arguments.required(Self.bundleId)
        let anchors = try roots.flatMap { try InitCommand.loadRoot($0) }
        if let pinned = try PinnedRoots.pinned(arguments) {
            for anchor in anchors where !pinned.contains(anchor.sha256Fingerprint) {
                throw InputError(message: "refusing to check: --root-cert root \(anchor.sha256Fingerprint) (\(anchor.subject)) is not a pinned root "
                                 + "(\(PinnedRoots.option.declaration.spelled) / $\(PinnedRoots.environmentVariable))")
            }
        }
        let configuration = try LedgerConfiguration(bundleId: bundleId, environment: environment,
                                                    appAppleId: try arguments[Self.appAppleId])
        return MessageDecoder(verifier: try SignedPayloadVerifier(trustAnchors: anchors), configuration: configuration)
    }
}
