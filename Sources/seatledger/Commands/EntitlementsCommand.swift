import AppStoreModels
import Foundation
import Projections
import SeatLedger

/// `seatledger entitlements ID`: a person's entitlements per product.
enum EntitlementsCommand: Command {
    static let name = "entitlements"
    static let summary = "show what a person is entitled to, per product (groups and individual subscriptions)"
    static let product = Option<[String]>(repeating: "product", value: "P", help: "only this product (repeat for several)")
    static let options: [any DeclaredOption] = LedgerLocation.options + [product] + Clocks.options
        + [Flag.json.help("machine-readable output on stdout   the body of GET /v1/entitlements/{id} (Events/api/entitlements.md)")]
    static let exitStatuses: [ExitStatus] = [.success, ExitStatus(.failure, "error, or nothing in the ledger names the identifier")]
    static let examples = ["seatledger entitlements m1 --db ledger.sqlite",
                           "seatledger entitlements user-42 --product com.example.family --json --db ledger.sqlite"]
    static let help = """
    Usage: seatledger entitlements ID [--product P]... [--as-of T] [--known-at T] [--db PATH] [--json]

    What the person ID names is entitled to, one line per product, entitled products first:
    until when (the moment it ends without news: a period or grace end), through what (an
    individual subscription, a group purchase, an assigned seat, a developer-hosted claim,
    Family Sharing) and in which group; when not entitled, since when and why, with the event.
    ID is the app's user id (linked by a StoreKit transaction or AppTransaction the app server
    sent), or an appTransactionId, originalTransactionId, transaction id, seatClaimId or
    memberRef. The links the app server made are listed, and conflicting ones (one user id with
    several Apple Accounts, one Apple identity with several user ids) are named: both are kept.

    Options:
    \(OptionHelp.lines(options))
    """

    static func maxPositionals(_ positionals: [String]) -> Int? { 1 }

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        guard let identifier = arguments.positionals.first else { throw UsageError(message: "entitlements needs an ID") }
        let clocks = try Clocks(arguments)
        let products = Set(try arguments[product])
        let ledger = try LedgerLocation(arguments).open(readOnly: true)
        ledger.warnIfProjectionsOutdated(command: name)
        let answer = try ledger.entitlements(identifier, asOf: clocks.asOf, knownAt: clocks.knownAt)
            .keeping { products.isEmpty || $0.productId.map(products.contains) == true }
        if arguments[Flag.json] {
            Terminal.out(String(decoding: answer.prettyJSON(), as: UTF8.self))
        } else {
            Terminal.out(EntitlementText.render(answer))
        }
        return .success
    }
}

/// The text `seatledger entitlements` prints.
enum EntitlementText {
    static func render(_ answer: EntitlementAnswer) -> String {
        var lines = ["\(answer.identifier) as of \(Timestamp.iso8601(answer.asOf))"
            + (answer.knownAt.map { ", known at \(Timestamp.iso8601($0))" } ?? "") + " (\(answer.bundleId), \(answer.environment))"]
        if answer.entitlements.isEmpty { lines.append("  no entitlement to any product") }
        for entitlement in answer.entitlements {
            let product = entitlement.productId ?? "(no product named)"
            if entitlement.entitled {
                let until = entitlement.until.map { "until \(Timestamp.iso8601($0))" } ?? "with no known end"
                lines.append("  \(product): entitled \(until)" + (entitlement.grants.first.map { ", \(describe($0))" } ?? ""))
            } else if let reason = entitlement.reason {
                lines.append("  \(product): not entitled since \(Timestamp.iso8601(reason.at)): \(reason.reason.rawValue) (\(reason.reason.explanation)), event \(reason.eventId)"
                    + (reason.causeText.map { "; \($0)" } ?? "") + (entitlement.grants.first.map { "; last \(describe($0))" } ?? ""))
            } else {
                lines.append("  \(product): not entitled")
            }
            for grant in entitlement.grants.dropFirst() {
                lines.append("      also \(grant.hasAccess ? "entitled" : "ended") " + describe(grant))
            }
        }
        for link in answer.links {
            let apple = [link.appTransactionId.map { "appTransactionId \($0)" }, link.originalTransactionId.map { "originalTransactionId \($0)" }]
                .compactMap { $0 }.joined(separator: ", ")
            lines.append("  linked: user id \(link.userId) ↔ \(apple.isEmpty ? "no Apple identity" : apple) (event \(link.eventId), recorded \(Timestamp.iso8601(link.recordedAt)))")
        }
        for conflict in answer.conflicts {
            let what = conflict.kind == "USER_HAS_SEVERAL_APPLE_ACCOUNTS" ? "user id \(conflict.subject) is linked to several Apple Accounts"
                : "\(conflict.subject) is linked to several user ids"
            lines.append("  note: \(what): \(conflict.linkedTo.joined(separator: ", ")) (all kept and answered)")
        }
        return lines.joined(separator: "\n")
    }

    /// "through an assigned seat in group 2000…", "through an individual subscription 2000…".
    static func describe(_ grant: EntitlementGrant) -> String {
        let how: String
        switch grant.source {
        case .purchased: how = grant.groupKey == nil ? "individual subscription \(grant.originalTransactionId ?? "?")" : "group purchase"
        case .assignedSeat: how = "assigned seat"
        case .developerClaim: how = "developer-hosted claim" + (grant.seatClaimId.map { " \($0)" } ?? "")
        case .familyShared: how = "Family Sharing"
        default: how = "access held as \(grant.source.rawValue)"
        }
        let group = grant.groupKey.map { " in group \($0)" } ?? ""
        return "through \(how)\(group) (status \(grant.status.rawValue))"
    }
}
