import AppStoreModels
import Foundation
import LedgerStorage
import Reports
import SeatLedger
import SeatLedgerService

/// `seatledger token add|list|revoke`: bearer tokens of `seatledger serve`'s `/v1` API.
enum TokenCommand: Command {
    static let name = "token"
    static let summary = "bearer tokens for the serve API: add (printed once), list, revoke"
    static let scope = Option<[String]>(repeating: "scope", value: "S",
                                        help: "read, seats, link or record (add only; repeatable, or comma-separated)",
                                        completion: .words(APITokenRecord.knownScopes.sorted()))
    static let options: [any DeclaredOption] = LedgerLocation.options + [
        scope,
        AnchorOption.option.help("""
            (add, revoke) the head anchor of `verify`, `ingest` and `serve --anchor`:
            checked first, then rewritten with the changed token, so they accept the
            change. A token added or revoked without it makes them refuse the ledger
            """),
        Flag.json,
    ]
    static let actions = ["add", "list", "revoke"]
    static let examples = ["seatledger token add app-server --scope read --scope link --scope record"]
    static let help = """
    Usage: seatledger token add NAME --scope S [--scope S …] [--anchor FILE] [--db PATH] [--json]
           seatledger token add NAME --scope S … --config FILE --ledger NAME [--ledger NAME …] [--json]
           seatledger token list [--db PATH] [--json]
           seatledger token revoke NAME [--anchor FILE] [--db PATH] [--json]

    `add` mints a random token (slt_ and 43 base64url characters, 256 bits from the system's
    cryptographic generator), prints it ONCE on stdout and stores only its SHA-256 in the
    ledger's api_tokens table (never part of the event log). Give it to the client as
    `Authorization: Bearer <token>`. A token carries one or more scopes, and opens each route
    of `seatledger serve` whose scope is one of them:
      read     the /v1 read API (groups, members, changes, replay, diff, audit)
      seats    the seat operations (claim, unclaim and associate under /v1/groups/{ref}/seats)
      link     linking StoreKit transactions to members (POST /v1/storekit)
      record   recording App Store Server API responses the app server got (POST /v1/api-responses)
    An app server that reads entitlements, links transactions and records responses needs one
    token: `--scope read --scope link --scope record` (or `--scope read,link,record`). A running
    `serve` sees new and revoked tokens within a second. `list` shows names, scopes, creation
    and revocation times and the first 12 hex digits of each digest (never a token). `revoke`
    makes the token authenticate nothing; the name stays taken.
    With `--config FILE`, `add` takes `--ledger` several times: one token (one secret) stored in
    each ledger named, which it opens in `serve --config FILE` (a token opens the ledgers that
    hold it; the name must be free in all of them).

    Options:
    \(OptionHelp.lines(options))
    """

    /// The scopes of `--scope` (given more than once, or comma-separated): the `scope` column's
    /// text (``APITokenRecord/storedScope(_:)``), or a usage error naming an unknown or empty one.
    static func scopes(_ values: [String]) throws -> String {
        guard !values.isEmpty else {
            throw UsageError(message: "token add needs --scope (read, seats, link or record; give it more than once for several)")
        }
        let scopes = values.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        if scopes.contains("") {
            throw UsageError(message: "--scope has an empty scope in \(values.joined(separator: " ")); give read, seats, link or record")
        }
        do {
            return try APITokenRecord.storedScope(scopes)
        } catch {
            throw UsageError(message: "--scope: \(error.message)")
        }
    }

    static func maxPositionals(_ positionals: [String]) -> Int? { positionals.first == "list" ? 1 : 2 }

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        guard let action = arguments.positionals.first, actions.contains(action) else {
            throw UsageError(message: "expected `token add NAME --scope S`, `token list` or `token revoke NAME`")
        }
        let json = arguments[Flag.json]
        let now = Clocks.now
        switch action {
        case "list":
            guard try arguments[Self.scope].isEmpty else { throw UsageError(message: "--scope applies to `token add` only") }
            guard !arguments.contains(AnchorOption.option) else { throw UsageError(message: "--anchor applies to `token add` and `token revoke`") }
            let ledger = try LedgerLocation(arguments).open(readOnly: true)
            let records = try ledger.apiTokens()
            if json {
                Terminal.json(.array(records.map { record in
                    ["name": .string(record.name), "scope": .string(record.scope), "scopes": .array(record.scopes.map(JSONValue.string)),
                     "sha256Prefix": .string(String(record.sha256.prefix(12))),
                     "createdAt": .timestamp(record.createdAt), "revokedAt": .timestamp(record.revokedAt)]
                }))
            } else if records.isEmpty {
                Terminal.out("No tokens.")
            } else {
                let width = Terminal.width
                for record in records {
                    let state = record.revokedAt.map { "revoked \(Timestamp.iso8601($0))" } ?? "active"
                    Terminal.out(TextTable.fields([record.name, record.scopesText, "sha256 \(record.sha256.prefix(12))…",
                                                   "created \(Timestamp.iso8601(record.createdAt))", state], maxWidth: width))
                }
            }
            return .success
        case "add":
            guard arguments.positionals.count == 2 else { throw UsageError(message: "token add needs a NAME") }
            let name = arguments.positionals[1]
            guard !name.isEmpty, name.utf8.count <= 100, name.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
                throw UsageError(message: "token NAME must be 1-100 letters, digits, '-', '_' or '.', got \(name)")
            }
            let scope = try scopes(try arguments[Self.scope])
            let token = TokenAuthenticator.mintToken()
            // One secret in every ledger named (`--config FILE --ledger A --ledger B`): the token
            // opens each. The name is checked free in all of them before any is written.
            let locations = try LedgerLocation.all(arguments)
            if locations.count > 1, arguments.contains(AnchorOption.option) {
                throw UsageError(message: "--anchor names one ledger's anchor: add the token to one ledger at a time to keep anchors")
            }
            let ledgers = try locations.map { try $0.open() }
            for (location, ledger) in zip(locations, ledgers) where try ledger.apiTokens().contains(where: { $0.name == name }) {
                throw InputError(message: "a token named \(name) already exists in \(location.description) (`seatledger token list`); choose another name")
            }
            for ledger in ledgers {
                let anchorFile = try AnchorOption.checkedBeforeTrustChange(arguments, ledger: ledger)
                do {
                    try ledger.addAPIToken(name: name, scope: scope, sha256: TokenAuthenticator.digest(token), now: now)
                } catch let error as APITokenError {
                    throw InputError(message: error.message)
                }
                if let anchorFile { try AnchorOption.record(anchorFile, ledger: ledger) }
            }
            let record = APITokenRecord(name: name, scope: scope, sha256: "", createdAt: now, revokedAt: nil)
            if json {
                var fields: [String: JSONValue] = ["name": .string(name), "scope": .string(scope),
                                                   "scopes": .array(record.scopes.map(JSONValue.string)), "token": .string(token)]
                if locations.count > 1 || locations[0].name != nil { fields["ledgers"] = .array(locations.compactMap(\.name).map(JSONValue.string)) }
                Terminal.json(.object(fields))
            } else {
                Terminal.out(token)
                let opened = locations.compactMap(\.name)
                Terminal.err("Token \(name) (\(record.scopesText)) added\(opened.isEmpty ? "" : " to " + opened.joined(separator: ", ")); it is shown only this once. "
                             + "Send it as `Authorization: Bearer <token>`.")
            }
            return .success
        default:
            guard arguments.positionals.count == 2 else { throw UsageError(message: "token revoke needs a NAME") }
            guard try arguments[Self.scope].isEmpty else { throw UsageError(message: "--scope applies to `token add` only") }
            let name = arguments.positionals[1]
            let ledger = try LedgerLocation(arguments).open()
            let anchorFile = try AnchorOption.checkedBeforeTrustChange(arguments, ledger: ledger)
            guard try ledger.revokeAPIToken(name: name, now: now) else {
                throw InputError(message: "no active token named \(name) (see `seatledger token list`)")
            }
            if let anchorFile { try AnchorOption.record(anchorFile, ledger: ledger) }
            if json { Terminal.json(["name": .string(name), "revoked": true]) } else { Terminal.out("Revoked token \(name).") }
            return .success
        }
    }
}
