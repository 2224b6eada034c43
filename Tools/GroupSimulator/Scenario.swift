import AppStoreModels
import Foundation

/// Where a partial refund's `revokedSeatQuantity` goes in the purchaser's transaction.
public enum RevokedSeatPlacement: String, Sendable, CaseIterable {
    /// `multiSeatInfo.revokedSeatQuantity` (StoreKit's placement; the default).
    case multiSeatInfo
    /// Top-level `revokedSeatQuantity`.
    case topLevel
}

/// Which of the two plausible `UNCLAIM_SEATS` payload shapes to emit.
public enum UnclaimShape: String, Sendable, CaseIterable {
    /// Only `unclaimInfo {unclaimSeatIds}` (no `data`).
    case unclaimInfo
    /// `data` (app identity, purchaser's transaction and renewal info) plus `unclaimInfo`.
    case dataAndUnclaimInfo = "data+unclaimInfo"
}

/// One seat-price band: seats up to `upTo` (inclusive, counted from seat 1) cost `price` milliunits each.
public struct PriceBand: Sendable, Hashable {
    /// Last seat number in this band; `nil` for the open-ended last band.
    public var upTo: Int?
    /// Price per seat, milliunits of USD.
    public var price: Int64

    public init(upTo: Int?, price: Int64) {
        self.upTo = upTo
        self.price = price
    }
}

/// The group a scenario scripts: its purchase and the App Store settings that shape its payloads.
public struct GroupDefinition: Sendable, Hashable {
    /// `APPLE` (Apple-hosted invitations) or `DEVELOPER` (seat claims).
    public var invitationManagement: String = "APPLE"
    /// Seats bought by `purchase` (the purchaser holds one).
    public var seats: Int = 8
    /// Price schedule; the default gives the guide's 5 × 9.99 + 3 × 7.99 = 73.92 for 8 seats.
    public var priceBands: [PriceBand] = [PriceBand(upTo: 5, price: 9990), PriceBand(upTo: nil, price: 7990)]
    public var productId: String = SimulatedApp.productId
    /// Billing period length (`30d` = one "month").
    public var period: SpanExpression = SpanExpression(millis: 30 * 86_400_000)
    /// Billing grace period length.
    public var gracePeriod: SpanExpression = SpanExpression(millis: 16 * 86_400_000)
    public var revokedSeatQuantityPlacement: RevokedSeatPlacement = .multiSeatInfo
    public var unclaimShape: UnclaimShape = .unclaimInfo

    public init() {}
}

/// What a step does. Raw values are the `"do"` strings of the scenario file format.
public enum StepAction: String, Sendable, CaseIterable {
    case purchase, memberJoin, memberRemove, memberLeave, getCustomerGroups, getGroupMembers
    case claimSeat, claimSeatRetry, associateSeat, unclaimSeat, unclaimSeats, getSeatInfo
    case increaseSeats, decreaseAtRenewal, renew, refundSeats, refundFull, cancel, expire
    case billingRetry, gracePeriod, graceExpired, recover, resubscribe, orgAssign, orgRevoke
    case familyShare, familyRevoke

    /// Keys (besides `do`, `at`, `note`) the step accepts.
    var allowedKeys: Set<String> {
        switch self {
        case .purchase: return ["seats"]
        case .memberJoin: return ["member", "subtype"]
        case .memberRemove, .memberLeave: return ["member", "revocationType"]
        case .getCustomerGroups: return ["customer", "placeholder"]
        case .getGroupMembers: return ["placeholder"]
        case .claimSeat: return ["member", "withAppTransactionId"]
        case .claimSeatRetry, .associateSeat, .unclaimSeat: return ["member"]
        case .unclaimSeats: return ["members", "reason", "shape"]
        case .getSeatInfo, .refundFull, .cancel, .expire, .billingRetry, .gracePeriod, .graceExpired, .recover, .renew: return []
        case .increaseSeats, .decreaseAtRenewal: return ["seats"]
        case .refundSeats: return ["seats", "shape"]
        case .resubscribe: return ["seats", "invitationManagement"]
        case .orgAssign: return ["member", "organization", "role"]
        case .orgRevoke: return ["member", "revocationType"]
        case .familyShare: return ["member", "ownership"]
        case .familyRevoke: return ["member"]
        }
    }

    /// Keys the step requires.
    var requiredKeys: Set<String> {
        switch self {
        case .memberJoin, .memberRemove, .memberLeave, .claimSeat, .claimSeatRetry, .associateSeat, .unclaimSeat, .orgRevoke,
             .familyShare, .familyRevoke:
            return ["member"]
        case .orgAssign: return ["member", "organization"]
        case .unclaimSeats: return ["members"]
        case .increaseSeats, .decreaseAtRenewal, .refundSeats: return ["seats"]
        default: return []
        }
    }

    /// One line for `--help`/docs.
    public var summary: String {
        switch self {
        case .purchase: return "group purchase: SUBSCRIBED/INITIAL_BUY, one PURCHASED transaction for `seats` (default group.seats)"
        case .memberJoin: return "Apple-hosted member joins: SUBSCRIBED/INITIAL_BUY (or RESUBSCRIBE when rejoining) with the member's ASSIGNED transaction"
        case .memberRemove: return "purchaser removes an Apple-hosted member: REVOKE, revocationType ASSIGNMENT_REVOKE (or `revocationType`)"
        case .memberLeave: return "Apple-hosted member leaves: same REVOKE as memberRemove"
        case .getCustomerGroups: return "Get Customer Groups for `customer` (\"purchaser\" or a member; `placeholder: true` = sandbox placeholder answer)"
        case .getGroupMembers: return "Get Group Members for the group (purchaser + current members), or the placeholder group"
        case .claimSeat: return "developer-hosted Claim Seat (new requestIdentifier), optionally with the member's appTransactionId"
        case .claimSeatRetry: return "retry of the member's Claim Seat: same requestIdentifier, same seatClaimId"
        case .associateSeat: return "Associate Seat with the member's appTransactionId"
        case .unclaimSeat: return "Unclaim Seat (developer removes the member)"
        case .unclaimSeats: return "UNCLAIM_SEATS notification for `members` (`reason`: memberLeft | parentalDecline | seatRefund)"
        case .getSeatInfo: return "Get Seat Info (Apple's view: totalSeatCount, availableSeatCount, assignedSeatClaimIds)"
        case .increaseSeats: return "DID_CHANGE_RENEWAL_PREF/INCREASE_QUANTITY to `seats` total: a second transaction with only the added seats"
        case .decreaseAtRenewal: return "DID_CHANGE_RENEWAL_PREF/DECREASE_QUANTITY with renewalQuantity `seats` (takes effect at renewal)"
        case .renew: return "DID_RENEW at the period end: one transaction for the renewal quantity (+ DID_RENEW for Apple-hosted members)"
        case .refundSeats: return "REFUND/SEATS of `seats` seats, then REVOKE (Apple-hosted, newest first) or UNCLAIM_SEATS (developer-hosted) as needed"
        case .refundFull: return "REFUND with revocationType REFUND_FULL on every transaction of the period"
        case .cancel: return "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED"
        case .expire: return "EXPIRED/VOLUNTARY (or BILLING_RETRY after a billing failure) at the period end"
        case .billingRetry: return "DID_FAIL_TO_RENEW (no subtype), isInBillingRetryPeriod true, no grace"
        case .gracePeriod: return "DID_FAIL_TO_RENEW/GRACE_PERIOD with gracePeriodExpiresDate = period end + group.gracePeriod"
        case .graceExpired: return "GRACE_PERIOD_EXPIRED at the grace end (billing retry continues)"
        case .recover: return "DID_RENEW/BILLING_RECOVERY (within grace: period keeps its dates; else a new period from now)"
        case .resubscribe: return "SUBSCRIBED/RESUBSCRIBE after expiry: same originalTransactionId, new transactionId"
        case .orgAssign: return "organization (Volume Purchasing) seat: SUBSCRIBED/INITIAL_BUY with an ASSIGNED transaction, no multiSeatInfo"
        case .orgRevoke: return "organization revokes the seat: REVOKE, revocationType ASSIGNMENT_REVOKE"
        case .familyShare: return "the purchaser's family member gets a FAMILY_SHARED copy of the group purchase (multiSeatInfo included; `ownership` overrides the value, e.g. an undocumented one): SUBSCRIBED/INITIAL_BUY"
        case .familyRevoke: return "the family member's copy is revoked: REVOKE, revocationType FAMILY_REVOKE"
        }
    }
}

/// One scripted step of a lifecycle.
public struct Step: Sendable, Hashable {
    public var action: StepAction
    /// When; `nil` = the action's default (`periodEnd` for renew/expire/billingRetry/gracePeriod,
    /// `graceEnd` for graceExpired, else one hour after the previous step).
    public var at: TimeExpression?
    public var member: String?
    public var members: [String]?
    public var seats: Int?
    public var subtype: String?
    public var revocationType: String?
    public var withAppTransactionId: Bool?
    public var reason: String?
    public var shape: UnclaimShape?
    public var organization: String?
    public var role: String?
    public var customer: String?
    public var placeholder: Bool?
    public var invitationManagement: String?
    /// `inAppOwnershipType` of a `familyShare` holder (default `FAMILY_SHARED`).
    public var ownership: String?
    /// How long after the step's time Apple signs its notifications (the payload dates stay at
    /// the step's time): a REVOKE signed hours after its `revocationDate`, a late DID_RENEW.
    public var signedLate: SpanExpression?
    /// Free text kept in the file (e.g. which guide section the step follows).
    public var note: String?

    public init(_ action: StepAction, at: String? = nil, member: String? = nil, members: [String]? = nil, seats: Int? = nil,
                subtype: String? = nil, revocationType: String? = nil, withAppTransactionId: Bool? = nil, reason: String? = nil,
                shape: UnclaimShape? = nil, organization: String? = nil, role: String? = nil, customer: String? = nil,
                placeholder: Bool? = nil, invitationManagement: String? = nil, ownership: String? = nil,
                signedLate: String? = nil, note: String? = nil) {
        self.action = action
        // Built-in scenarios pass literal, valid expressions.
        self.at = at.map { text in (try? TimeExpression.parse(text)) ?? TimeExpression(anchor: .prev) }
        self.member = member
        self.members = members
        self.seats = seats
        self.subtype = subtype
        self.revocationType = revocationType
        self.withAppTransactionId = withAppTransactionId
        self.reason = reason
        self.shape = shape
        self.organization = organization
        self.role = role
        self.customer = customer
        self.placeholder = placeholder
        self.invitationManagement = invitationManagement
        self.ownership = ownership
        self.signedLate = signedLate.map { text in (try? SpanExpression.parse(text)) ?? SpanExpression() }
        self.note = note
    }
}

/// A scripted group lifecycle: the group definition and ordered steps with relative times.
///
/// See `Events/simulator.md` for the file format.
public struct Scenario: Sendable, Hashable {
    public var name: String
    public var description: String
    public var group: GroupDefinition
    /// Epoch ms of the scenario start (default 2026-10-01T00:00:00Z).
    public var start: EpochMillis?
    /// When the expected state is evaluated; default: the last emitted event.
    public var evaluateAt: TimeExpression?
    public var steps: [Step]

    public init(name: String, description: String, group: GroupDefinition = GroupDefinition(), start: EpochMillis? = nil,
                evaluateAt: TimeExpression? = nil, steps: [Step]) {
        self.name = name
        self.description = description
        self.group = group
        self.start = start
        self.evaluateAt = evaluateAt
        self.steps = steps
    }
}

// MARK: - JSON file format

extension Scenario {
    /// Parses a scenario file.
    public static func parse(_ data: Data) throws(SimulatorError) -> Scenario {
        let json: JSONValue
        do {
            json = try JSONValue.parse(data)
        } catch {
            throw SimulatorError("scenario is not valid JSON: \(error.reason)")
        }
        return try Scenario(json: json)
    }

    /// Reads a scenario from its JSON form, naming the offending field on error.
    public init(json: JSONValue) throws(SimulatorError) {
        guard let object = json.objectValue else { throw SimulatorError("scenario: expected a JSON object") }
        try Self.checkKeys(object, allowed: ["name", "description", "start", "evaluateAt", "group", "steps"], at: "scenario")
        guard let name = object["name"]?.stringValue, !name.isEmpty else { throw SimulatorError("scenario: missing \"name\"") }
        self.name = name
        self.description = object["description"]?.stringValue ?? ""
        if let start = object["start"] {
            guard let millis = Timestamp.parse(start) else { throw SimulatorError("scenario.start: expected an ISO 8601 time") }
            self.start = millis
        } else {
            self.start = nil
        }
        self.evaluateAt = try object["evaluateAt"].map { value throws(SimulatorError) in
            guard let text = value.stringValue else { throw SimulatorError("scenario.evaluateAt: expected a time string") }
            return try TimeExpression.parse(text)
        }
        self.group = try Self.parseGroup(object["group"] ?? .object([:]))
        guard let steps = object["steps"]?.arrayValue else { throw SimulatorError("scenario: missing \"steps\" array") }
        var parsed: [Step] = []
        for (index, step) in steps.enumerated() {
            parsed.append(try Self.parseStep(step, at: "steps[\(index)]"))
        }
        self.steps = parsed
    }

    /// The scenario file form (only non-default fields are written).
    public var json: JSONValue {
        var object: [String: JSONValue] = ["name": .string(name), "steps": .array(steps.map(\.json))]
        if !description.isEmpty { object["description"] = .string(description) }
        if let start { object["start"] = .string(Timestamp.iso8601(start)) }
        if let evaluateAt { object["evaluateAt"] = .string(evaluateAt.description) }
        object["group"] = group.json
        return .object(object)
    }

    static func checkKeys(_ object: [String: JSONValue], allowed: Set<String>, at path: String) throws(SimulatorError) {
        for key in object.keys.sorted() where !allowed.contains(key) {
            throw SimulatorError("\(path): unknown key \"\(key)\" (allowed: \(allowed.sorted().joined(separator: ", ")))")
        }
    }

    static func parseGroup(_ json: JSONValue) throws(SimulatorError) -> GroupDefinition {
        guard let object = json.objectValue else { throw SimulatorError("group: expected an object") }
        try checkKeys(object, allowed: ["invitationManagement", "seats", "priceTiers", "productId", "period", "gracePeriod",
                                        "revokedSeatQuantityPlacement", "unclaimShape"], at: "group")
        var group = GroupDefinition()
        if let value = object["invitationManagement"] {
            guard let text = value.stringValue, !text.isEmpty else { throw SimulatorError("group.invitationManagement: expected APPLE or DEVELOPER") }
            group.invitationManagement = text
        }
        if let value = object["seats"] {
            guard let n = value.int64Value, n >= 1, n <= 100_000 else { throw SimulatorError("group.seats: expected an integer ≥ 1") }
            group.seats = Int(n)
        }
        if let value = object["priceTiers"] {
            guard let items = value.arrayValue, !items.isEmpty else { throw SimulatorError("group.priceTiers: expected a non-empty array") }
            var bands: [PriceBand] = []
            for (i, item) in items.enumerated() {
                guard let o = item.objectValue else { throw SimulatorError("group.priceTiers[\(i)]: expected an object") }
                try checkKeys(o, allowed: ["upTo", "price"], at: "group.priceTiers[\(i)]")
                guard let price = o["price"]?.int64Value, price >= 0 else {
                    throw SimulatorError("group.priceTiers[\(i)].price: expected milliunits (e.g. 9990)")
                }
                let upTo = try o["upTo"].map { v throws(SimulatorError) -> Int in
                    guard let n = v.int64Value, n >= 1 else { throw SimulatorError("group.priceTiers[\(i)].upTo: expected a seat number ≥ 1") }
                    return Int(n)
                }
                if upTo == nil, i != items.count - 1 {
                    throw SimulatorError("group.priceTiers[\(i)]: only the last band may omit upTo")
                }
                if let upTo, let previous = bands.last?.upTo, upTo <= previous {
                    throw SimulatorError("group.priceTiers[\(i)].upTo: bands must be increasing")
                }
                bands.append(PriceBand(upTo: upTo, price: price))
            }
            group.priceBands = bands
        }
        if let value = object["productId"] {
            guard let text = value.stringValue, !text.isEmpty else { throw SimulatorError("group.productId: expected a string") }
            group.productId = text
        }
        for key in ["period", "gracePeriod"] {
            guard let value = object[key] else { continue }
            guard let text = value.stringValue else { throw SimulatorError("group.\(key): expected a duration like 30d") }
            let span: SpanExpression
            do { span = try SpanExpression.parse(text) } catch { throw SimulatorError("group.\(key): \(error.message)") }
            guard span.periods == 0, span.millis > 0 else { throw SimulatorError("group.\(key): expected a positive fixed duration like 30d") }
            if key == "period" { group.period = span } else { group.gracePeriod = span }
        }
        if let value = object["revokedSeatQuantityPlacement"] {
            guard let p = value.stringValue.flatMap(RevokedSeatPlacement.init(rawValue:)) else {
                throw SimulatorError("group.revokedSeatQuantityPlacement: expected multiSeatInfo or topLevel")
            }
            group.revokedSeatQuantityPlacement = p
        }
        if let value = object["unclaimShape"] {
            guard let s = value.stringValue.flatMap(UnclaimShape.init(rawValue:)) else {
                throw SimulatorError("group.unclaimShape: expected unclaimInfo or data+unclaimInfo")
            }
            group.unclaimShape = s
        }
        return group
    }

    static func parseStep(_ json: JSONValue, at path: String) throws(SimulatorError) -> Step {
        guard let object = json.objectValue else { throw SimulatorError("\(path): expected an object") }
        guard let name = object["do"]?.stringValue else {
            throw SimulatorError("\(path): missing \"do\" (one of: \(StepAction.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        guard let action = StepAction(rawValue: name) else {
            throw SimulatorError("\(path): unknown action \"\(name)\" (one of: \(StepAction.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        let here = "\(path) (\(name))"
        try checkKeys(object, allowed: action.allowedKeys.union(["do", "at", "note", "signedLate"]), at: here)
        for key in action.requiredKeys.sorted() where object[key] == nil {
            throw SimulatorError("\(here): missing \"\(key)\"")
        }
        var step = Step(action)
        func string(_ key: String) throws(SimulatorError) -> String? {
            guard let value = object[key] else { return nil }
            guard case .string(let s) = value, !s.isEmpty else { throw SimulatorError("\(here).\(key): expected a non-empty string") }
            return s
        }
        func bool(_ key: String) throws(SimulatorError) -> Bool? {
            guard let value = object[key] else { return nil }
            guard let b = value.boolValue else { throw SimulatorError("\(here).\(key): expected true or false") }
            return b
        }
        if let text = try string("at") {
            do { step.at = try TimeExpression.parse(text) } catch { throw SimulatorError("\(here).at: \(error.message)") }
        }
        step.member = try string("member")
        if let value = object["members"] {
            guard let items = value.arrayValue, !items.isEmpty, items.allSatisfy({ $0.stringValue != nil }) else {
                throw SimulatorError("\(here).members: expected a non-empty array of member names")
            }
            step.members = items.compactMap(\.stringValue)
        }
        if let value = object["seats"] {
            guard let n = value.int64Value, n >= 1 else { throw SimulatorError("\(here).seats: expected an integer ≥ 1") }
            step.seats = Int(n)
        }
        step.subtype = try string("subtype")
        step.revocationType = try string("revocationType")
        step.withAppTransactionId = try bool("withAppTransactionId")
        step.reason = try string("reason")
        if let text = try string("shape") {
            guard let shape = UnclaimShape(rawValue: text) else { throw SimulatorError("\(here).shape: expected unclaimInfo or data+unclaimInfo") }
            step.shape = shape
        }
        step.organization = try string("organization")
        if let role = try string("role") {
            guard role == "ADMIN" || role == "NONE" else { throw SimulatorError("\(here).role: expected ADMIN or NONE") }
            step.role = role
        }
        step.customer = try string("customer")
        step.placeholder = try bool("placeholder")
        step.invitationManagement = try string("invitationManagement")
        step.ownership = try string("ownership")
        if let text = try string("signedLate") {
            do { step.signedLate = try SpanExpression.parse(text) } catch { throw SimulatorError("\(here).signedLate: \(error.message)") }
        }
        step.note = try string("note")
        if action == .memberJoin, let subtype = step.subtype, subtype != "INITIAL_BUY", subtype != "RESUBSCRIBE" {
            throw SimulatorError("\(here).subtype: expected INITIAL_BUY or RESUBSCRIBE")
        }
        return step
    }
}

extension GroupDefinition {
    /// The `group` object of the file format (every field written, so files are self-describing).
    public var json: JSONValue {
        .object([
            "invitationManagement": .string(invitationManagement),
            "seats": .count(seats),
            "priceTiers": .array(priceBands.map { band in
                var o: [String: JSONValue] = ["price": .int(band.price)]
                if let upTo = band.upTo { o["upTo"] = .count(upTo) }
                return .object(o)
            }),
            "productId": .string(productId),
            "period": .string(period.description),
            "gracePeriod": .string(gracePeriod.description),
            "revokedSeatQuantityPlacement": .string(revokedSeatQuantityPlacement.rawValue),
            "unclaimShape": .string(unclaimShape.rawValue),
        ])
    }
}

extension Step {
    /// The step object of the file format.
    public var json: JSONValue {
        var o: [String: JSONValue] = ["do": .string(action.rawValue)]
        if let at { o["at"] = .string(at.description) }
        if let member { o["member"] = .string(member) }
        if let members { o["members"] = .array(members.map(JSONValue.string)) }
        if let seats { o["seats"] = .count(seats) }
        if let subtype { o["subtype"] = .string(subtype) }
        if let revocationType { o["revocationType"] = .string(revocationType) }
        if let withAppTransactionId { o["withAppTransactionId"] = .bool(withAppTransactionId) }
        if let reason { o["reason"] = .string(reason) }
        if let shape { o["shape"] = .string(shape.rawValue) }
        if let organization { o["organization"] = .string(organization) }
        if let role { o["role"] = .string(role) }
        if let customer { o["customer"] = .string(customer) }
        if let placeholder { o["placeholder"] = .bool(placeholder) }
        if let invitationManagement { o["invitationManagement"] = .string(invitationManagement) }
        if let ownership { o["ownership"] = .string(ownership) }
        if let signedLate { o["signedLate"] = .string(signedLate.description) }
        if let note { o["note"] = .string(note) }
        return .object(o)
    }
}
