import AppStoreModels
import Foundation
import LedgerEvents
import Projections

/// Builds decoded ledger events (no signatures) for pure projection tests.
///
/// Times are minutes after a fixed base so tests read like the testing guide's timelines.
public struct ScenarioBuilder {
    /// An empty scenario.
    public init() {}

    public static let base: EpochMillis = 1_790_000_000_000  // 2026-09-21T…Z
    public static let day: EpochMillis = 86_400_000
    public static let product = "com.example.reps.team.monthly"

    public private(set) var events: [LedgerEvent] = []
    private var counter = 0

    public static func t(_ minutes: Double) -> EpochMillis { base + EpochMillis(minutes * 60_000) }
    public static func days(_ d: Double) -> EpochMillis { base + EpochMillis(d * Double(day)) }

    /// A transaction payload.
    public static func transaction(
        id: String, original: String, app: String? = nil, ownership: String = "PURCHASED", quantity: Int64 = 1,
        purchase: EpochMillis, expires: EpochMillis, signed: EpochMillis? = nil, model: String? = "DEVELOPER",
        revocationDate: EpochMillis? = nil, revocationType: String? = nil, revokedSeats: Int64? = nil,
        seatAddition: Bool = false
    ) -> JSONValue {
        var tx: [String: JSONValue] = [
            "transactionId": .string(id), "originalTransactionId": .string(original), "productId": .string(product),
            "bundleId": "com.example.reps", "environment": "Sandbox", "inAppOwnershipType": .string(ownership),
            "quantity": .int(quantity), "purchaseDate": .int(purchase), "expiresDate": .int(expires),
            "signedDate": .int(signed ?? purchase), "type": "Auto-Renewable Subscription",
        ]
        if let app { tx["appTransactionId"] = .string(app) }
        if let model {
            var info: [String: JSONValue] = ["invitationManagement": .string(model),
                                             "priceTiers": [["price": 9990, "quantity": .int(quantity)]]]
            if let revokedSeats { info["revokedSeatQuantity"] = .int(revokedSeats) }
            tx["multiSeatInfo"] = .object(info)
        }
        if let revocationDate {
            tx["revocationDate"] = .int(revocationDate)
            tx["revocationReason"] = 1
        }
        if let revocationType { tx["revocationType"] = .string(revocationType) }
        if seatAddition { tx["additionalTransactionReason"] = "SEAT_ADDITION" }
        return .object(tx)
    }

    public static func renewal(original: String, quantity: Int64? = nil, grace: EpochMillis? = nil, retry: Bool? = nil,
                        signed: EpochMillis) -> JSONValue {
        var ri: [String: JSONValue] = ["originalTransactionId": .string(original), "signedDate": .int(signed),
                                       "environment": "Sandbox", "autoRenewStatus": 1]
        if let quantity { ri["renewalQuantity"] = .int(quantity) }
        if let grace { ri["gracePeriodExpiresDate"] = .int(grace) }
        if let retry { ri["isInBillingRetryPeriod"] = .bool(retry) }
        return .object(ri)
    }

    private mutating func nextId(_ prefix: String) -> String {
        counter += 1
        return "\(prefix)-\(String(format: "%04d", counter))"
    }

    /// Appends a notification; returns its event id (the notificationUUID).
    @discardableResult
    public mutating func notification(_ type: String, _ subtype: String? = nil, at time: EpochMillis, transaction: JSONValue? = nil,
                               renewal: JSONValue? = nil, unclaim: [String]? = nil, recordedAt: EpochMillis? = nil,
                               uuid: String? = nil) -> String {
        let id = uuid ?? nextId("n")
        var payload: [String: JSONValue] = ["notificationType": .string(type), "notificationUUID": .string(id),
                                            "signedDate": .int(time), "version": "2.0"]
        if let subtype { payload["subtype"] = .string(subtype) }
        if let unclaim { payload["unclaimInfo"] = ["unclaimSeatIds": .array(unclaim.map(JSONValue.string))] }
        var decoded: [String: JSONValue] = ["notification": .object(payload)]
        if let transaction { decoded["transactionInfo"] = transaction }
        if let renewal { decoded["renewalInfo"] = renewal }
        append(id: id, kind: .notification, type: type, subtype: subtype, status: nil, at: time, recordedAt: recordedAt,
               decoded: .object(decoded))
        return id
    }

    /// Appends an API response; returns its event id.
    @discardableResult
    public mutating func api(_ endpoint: String, method: String = "GET", path: String, status: Int64 = 200, body: JSONValue? = nil,
                      request: JSONValue? = nil, context: JSONValue? = nil, at time: EpochMillis,
                      recordedAt: EpochMillis? = nil, transactions: [JSONValue] = []) -> String {
        let id = nextId("api")
        let inner: JSONValue = [
            "endpoint": .string(endpoint), "method": .string(method), "path": .string(path), "status": .int(status),
            "body": body ?? .null, "requestBody": request ?? .null, "respondedAt": .int(time), "environment": "Sandbox",
            "context": context ?? .null,
        ]
        var decoded: [String: JSONValue] = ["apiResponse": inner]
        if !transactions.isEmpty {
            decoded["transactions"] = .array(transactions.map { ["path": "body", "payload": $0] })
        }
        append(id: id, kind: .apiResponse, type: endpoint, subtype: nil, status: status, at: time, recordedAt: recordedAt,
               decoded: .object(decoded))
        return id
    }

    private mutating func append(id: String, kind: EventKind, type: String, subtype: String?, status: Int64?,
                                 at time: EpochMillis, recordedAt: EpochMillis?, decoded: JSONValue) {
        events.append(LedgerEvent(position: Int64(events.count + 1), eventId: id, kind: kind, type: type, subtype: subtype,
                                  status: status, occurredAt: time, recordedAt: recordedAt ?? time, source: "test",
                                  origin: .live, raw: Data(), decoded: decoded, verification: [], hash: Data()))
    }

    // MARK: Common steps

    /// An `ASSIGNED` seat holder's `SUBSCRIBED`/`INITIAL_BUY` with their own transaction `otid`
    /// (`model` nil: an organization seat, no invitation model); returns the event id.
    @discardableResult
    public mutating func assignedSeat(_ otid: String, app: String, purchase: EpochMillis, expires: EpochMillis,
                               model: String? = nil) -> String {
        notification("SUBSCRIBED", "INITIAL_BUY", at: purchase,
                     transaction: Self.transaction(id: otid, original: otid, app: app, ownership: "ASSIGNED", purchase: purchase,
                                                   expires: expires, model: model))
    }

    @discardableResult
    public mutating func claim(_ claimId: String, purchaser: String, at time: EpochMillis, request: String? = nil,
                        app: String? = nil, memberRef: String? = nil) -> String {
        var req: [String: JSONValue] = ["requestIdentifier": .string(request ?? "req-\(claimId)")]
        if let app { req["appTransactionId"] = .string(app) }
        return api("ClaimSeat", method: "POST", path: "/groups/v1/transactions/\(purchaser)/seats",
                   body: ["seatClaimId": .string(claimId)], request: .object(req),
                   context: memberRef.map { ["memberRef": .string($0)] }, at: time)
    }

    @discardableResult
    public mutating func unclaim(_ claimId: String, purchaser: String, at time: EpochMillis) -> String {
        api("UnclaimSeat", method: "DELETE", path: "/groups/v1/transactions/\(purchaser)/seats/\(claimId)", status: 204, at: time)
    }

    /// Appends an operator's retraction of event `eventId` (a `decision` event routed by the
    /// retracted event's identifiers, as `seatledger retract` records it); returns its event id.
    @discardableResult
    public mutating func retract(_ eventId: String, at time: EpochMillis, recordedAt: EpochMillis? = nil) -> String {
        let id = nextId("retract")
        let routing = events.first { $0.eventId == eventId }.map { EventFacts($0).identifiers.sorted() } ?? []
        let decision: JSONValue = ["decision": [
            "action": .string(Retraction.action), "eventId": .string(eventId), "identifiers": .array(routing.map(JSONValue.string)),
            "reason": "test", "by": "tests", "at": .int(time),
        ]]
        append(id: id, kind: .decision, type: Retraction.eventType, subtype: nil, status: nil, at: time, recordedAt: recordedAt,
               decoded: decision)
        return id
    }

    // MARK: Projection

    public var facts: [EventFacts] { events.map(EventFacts.init) }

    /// `event` as an unsigned event to append to a store directly (raw bytes: its id), indexed
    /// under its facts' identifiers unless `indexed` is false.
    public static func newEvent(_ event: LedgerEvent, indexed: Bool = true) -> NewEvent {
        NewEvent(eventId: event.eventId, kind: event.kind, type: event.type, subtype: event.subtype, status: event.status,
                 occurredAt: event.occurredAt, raw: Data(event.eventId.utf8), decoded: event.decoded,
                 identifiers: indexed ? EventFacts(event).identifiers.map { EventIdentifier(.transactionId, $0) } : [],
                 verification: [], source: "test", origin: .live)
    }

    /// The state of group `key` folded from these events (or `override`), `nil` when no such group.
    public func state(_ key: String, asOf: EpochMillis, knownAt: EpochMillis? = nil, facts override: [EventFacts]? = nil) -> GroupState? {
        let facts = override ?? self.facts
        guard let membership = GroupIdentityResolver.resolve(facts)[key] else { return nil }
        return GroupProjection.project(membership, facts: facts.filter { membership.concerns($0) }, asOf: asOf, knownAt: knownAt)
    }
}

extension GroupState {
    /// The claim member with this seat claim id.
    public func member(claim: String) -> MemberState? { members.first { $0.seatClaimId == claim } }
    /// The member whose own subscription is `otid`.
    public func member(otid: String) -> MemberState? { members.first { $0.originalTransactionId == otid } }
    /// The purchaser, if the group has one.
    public var purchaser: MemberState? { members.first { $0.role == .purchaser } }
}
