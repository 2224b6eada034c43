import AppStoreAPI
import AppStoreModels
import Foundation
import LedgerStorage
import Projections
import Reports
import SeatLedger

/// What `reconcile` did and found.
public struct ReconcileReport: Sendable {
    /// The reference given.
    public var reference: String
    /// The purchaser's original transaction id the calls used, if known.
    public var purchaserOriginalTransactionId: String?
    /// Every call, in order.
    public var calls: [APICallResult] = []
    /// Notes (skipped calls and why).
    public var notes: [String] = []
    /// Quarantine reasons of responses refused by ingest.
    public var quarantined: [String] = []
    /// Our projection against Apple's latest recorded view, after the calls.
    public var comparison: AppleComparison?

    /// Calls whose final answer was not 2xx (or that got no answer).
    public var failedCalls: [APICallResult] { calls.filter { !$0.isSuccess } }

    /// JSON for `--json`.
    public var json: JSONValue {
        [
            "reference": .string(reference), "purchaserOriginalTransactionId": .optional(purchaserOriginalTransactionId),
            "calls": .array(calls.map(\.json)), "notes": .array(notes.map(JSONValue.string)),
            "quarantined": .array(quarantined.map(JSONValue.string)), "comparison": comparison?.json ?? .null,
        ]
    }
}

/// Refreshes the ledger's view of one group from Apple: Get All Subscription Statuses (and
/// optionally Get Transaction History), Get Seat Info, Get Customer Groups and every page of
/// Get Group Members, each recorded as an event; then compares our projection with Apple's view
/// (``Ledger/compareWithApple(_:asOf:)``).
///
/// Not `Sendable` (it uses a `Ledger`, one thread at a time), and every call blocks its thread
/// for the API calls it makes, retries and `Retry-After` waits included: run it off Swift's
/// cooperative pool (`serve` runs it inside `LedgerPool.write`).
public struct GroupReconciler {
    /// The connection.
    public let api: LedgerAPI
    /// Members per Get Group Members page (1…100).
    public var memberPageLimit = 100
    /// Upper bound on pages per paged endpoint.
    public var maximumPages = 1_000

    /// Creates a reconciler.
    public init(api: LedgerAPI) { self.api = api }

    /// Reconciles the group `reference` resolves to (or, when the ledger knows nothing of it,
    /// treats `reference` as a transaction id and asks Apple first).
    ///
    /// - Parameters:
    ///   - withHistory: also page through Get Transaction History v2 (recovers every transaction
    ///     of the period, e.g. a missed seat addition).
    ///   - now: `asOf` of the comparison; `nil`: the moment of each reading, on the clock that
    ///     dates the responses (``LedgerAPI/clock``), so the answers just recorded are in it.
    public func run(_ reference: String, withHistory: Bool = false, now: EpochMillis?) throws -> ReconcileReport {
        let ledger = api.ledger
        // A fixed moment taken before the calls would leave out every response they record.
        func moment() -> EpochMillis { now ?? api.clock() }
        var report = ReconcileReport(reference: reference)
        func record(_ call: APICall) throws -> APICallResult {
            let (result, recorded) = try api.perform(call)
            report.calls.append(result)
            for item in recorded {
                if case .quarantined(let id, let rejection) = item.outcome {
                    report.quarantined.append("\(item.exchange.endpoint.rawValue) response quarantined as #\(id): \(rejection.reason)")
                }
            }
            return result
        }
        func state() -> GroupState? { try? ledger.groupState(reference, asOf: moment()) }

        var before = state()
        if before != nil, before?.purchaserOriginalTransactionId == nil, !(before?.groupIds.isEmpty ?? true) {
            report.notes.append("group \(before?.groupKey ?? reference) has no known purchaser (an organization group?); only its members can be listed")
        }
        let transactionId = before?.purchaserOriginalTransactionId ?? (before == nil ? reference : nil)
        if let transactionId {
            _ = try record(.getAllSubscriptionStatuses(transactionId: transactionId))
            if withHistory {
                var revision: String?
                for _ in 0..<maximumPages {
                    let result = try record(.getTransactionHistory(transactionId: transactionId, revision: revision))
                    guard result.isSuccess, result.body?["hasMore"]?.boolValue == true,
                          let next = result.body?["revision"]?.stringValue, next != revision else { break }
                    revision = next
                }
            }
            before = state()
        }
        let purchaser = before?.purchaserOriginalTransactionId ?? transactionId
        report.purchaserOriginalTransactionId = before?.purchaserOriginalTransactionId ?? transactionId
        var groupIds = Set(before?.groupIds ?? [])
        if let purchaser {
            if before?.invitationManagement == .apple {
                report.notes.append("Get Seat Info skipped: the group is Apple-hosted (seat endpoints serve developer-hosted groups only)")
            } else {
                _ = try record(.getSeatInfo(originalTransactionId: purchaser))
            }
            let groups = try record(.getCustomerGroups(customerId: purchaser))
            if groups.isSuccess {
                for group in groups.body?["groups"]?.arrayValue ?? [] {
                    if let id = group["groupId"]?.stringValue { groupIds.insert(id) }
                }
            }
        }
        if before == nil || before?.purchaserOriginalTransactionId == nil, let keys = try? ledger.groupKeys(for: reference) {
            for key in keys where !key.hasPrefix("unlinked:") && key != purchaser { groupIds.insert(key) }
        }
        if groupIds.remove(SandboxPlaceholder.groupId) != nil {
            report.notes.append("sandbox placeholder group \(SandboxPlaceholder.groupId) ignored")
        }
        for groupId in groupIds.sorted() {
            var token: String?
            for _ in 0..<maximumPages {
                let result = try record(try .getGroupMembers(groupId: groupId, limit: memberPageLimit, paginationToken: token))
                guard result.isSuccess, result.body?["hasMore"]?.boolValue == true,
                      let next = result.body?["paginationToken"]?.stringValue, !next.isEmpty, next != token else { break }
                token = next
            }
        }
        let key = (try? ledger.groupKeys(for: reference))?.isEmpty == false ? reference : purchaser
        if let key, (try? ledger.groupKeys(for: key))?.isEmpty == false {
            report.comparison = try ledger.compareWithApple(key, asOf: moment())
        } else {
            report.notes.append("no group in the ledger matches \(reference) even after asking Apple")
        }
        return report
    }
}
