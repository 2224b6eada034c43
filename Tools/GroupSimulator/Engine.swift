import AppStoreModels
import Foundation
import JWSVerification

/// Whether an event is a signed notification or a recorded API response.
public enum SimulatedEventKind: String, Sendable {
    case notification
    case apiResponse
}

/// A notification before signing: the payload minus the nested JWS strings.
struct NotificationDraft: Sendable {
    var payload: [String: JSONValue]
    var data: [String: JSONValue]?
    var transaction: JSONValue?
    var renewal: JSONValue?
}

/// One event of a simulated stream, in scenario order, before fault drills.
public struct PlannedEvent: Sendable {
    /// Position in the undrilled stream (0-based); fault drills name events by it.
    public let index: Int
    /// `notificationUUID`, or for an API response the SHA-256 hex of its canonical line.
    public let eventId: String
    public let kind: SimulatedEventKind
    /// `signedDate` / `respondedAt`.
    public let occurredAt: EpochMillis
    /// Short description, e.g. `SUBSCRIBED/INITIAL_BUY purchaser` or `ClaimSeat m3`.
    public let label: String
    /// The scenario step that produced it.
    public let stepIndex: Int
    let body: Body

    enum Body: Sendable {
        case notification(NotificationDraft)
        case apiResponse(line: String)
    }
}

/// Identifiers, deterministic from the seed and the group's index in a load run.
struct IdentifierFactory: Sendable {
    private let block: UInt64
    private let groupIndex: UInt64
    private var transactions: UInt64 = 0
    private var appTransactions: UInt64 = 0
    private var groups: UInt64 = 0
    var random: SeededRandom

    init(seed: UInt64, groupIndex: Int) {
        block = seed % 1000
        self.groupIndex = UInt64(groupIndex)
        random = SeededRandom(seed: seed, stream: 1, index: UInt64(groupIndex))
    }

    /// 16 digits: 2000000000000001, 2000000000000002, …
    mutating func transactionId() -> String {
        transactions += 1
        return String(2_000_000_000_000_000 + block * 1_000_000_000_000 + groupIndex * 10_000 + transactions)
    }

    /// 18 digits, never the sandbox placeholder 700000000000000000.
    mutating func appTransactionId() -> String {
        appTransactions += 1
        return String(704_000_000_000_000_000 + block * 1_000_000_000_000 + groupIndex * 10_000 + appTransactions)
    }

    /// 18 digits, never the sandbox placeholder 900000000000000000.
    mutating func groupId() -> String {
        groups += 1
        return String(810_000_000_000_000_000 + block * 1_000_000_000_000 + groupIndex * 100 + groups)
    }

    mutating func uuid() -> String { random.uuid() }
}

/// Options that change what a run emits.
public struct SimulationOptions: Sendable, Hashable {
    /// Seeds every identifier and UUID, and the fault-drill draws.
    public var seed: UInt64 = 0
    /// Sandbox-style time: every duration divided by 8640 (30 days → 5 minutes, 1 hour → 417 ms).
    public var accelerated = false
    /// Overrides the scenario's `group.unclaimShape`.
    public var unclaimShape: UnclaimShape?
    /// Overrides the scenario's `group.revokedSeatQuantityPlacement`.
    public var revokedSeatPlacement: RevokedSeatPlacement?
    /// Overrides the scenario's start (epoch ms).
    public var start: EpochMillis?
    /// Added to the group index before identifiers are derived, so streams of different
    /// scenarios can share one ledger (built-ins use ``BuiltInLifecycles/options(for:seed:)``).
    public var groupIndexBase = 0
    /// The app the notifications name (`data.bundleId` and the transactions'); a ledger of
    /// another app refuses them, so streams of several apps can feed several ledgers.
    public var bundleId = SimulatedApp.bundleId
    public var faults = FaultDrills()

    public init(seed: UInt64 = 0, accelerated: Bool = false) {
        self.seed = seed
        self.accelerated = accelerated
    }
}

/// Runs a scenario's steps, producing unsigned events and the truth log.
final class ScenarioEngine {
    private enum MemberKind { case apple, claim, organization, family }

    private struct Member {
        let name: String
        let kind: MemberKind
        var appTransactionId: String
        // Apple-hosted and organization seats.
        var originalTransactionId: String?
        var currentTransactionId: String?
        var firstJoinedAt: EpochMillis = 0
        var joinedAt: EpochMillis = 0
        /// In the group (not revoked, not lapsed with the group).
        var active = false
        var organization: String?
        var role = "NONE"
        // Developer-hosted claims.
        var requestIdentifier: String?
        var seatClaimId: String?
        var claimedAt: EpochMillis = 0
        var claimActive = false
    }

    private struct Purchaser {
        let originalTransactionId: String
        let appTransactionId: String
        let originalPurchaseDate: EpochMillis
        var periodTransactionIds: [String]
        var periodStart: EpochMillis
        var periodEnd: EpochMillis
        var renewalQuantity: Int
        var invitationManagement: String
        var autoRenew = true
        var billingRetry = false
        var graceEnd: EpochMillis?
        var hasAccess = true
        var expired = false
        var revoked = false
    }

    let scenario: Scenario
    let options: SimulationOptions
    let groupIndex: Int
    private var group: GroupDefinition
    private var ids: IdentifierFactory
    private(set) var truth = TruthLog()
    private(set) var events: [PlannedEvent] = []
    private(set) var stepTimes: [EpochMillis] = []
    let start: EpochMillis
    let periodLength: Int64
    let graceLength: Int64
    private var lastEventTime: EpochMillis = .min
    private var stepIndex = 0
    /// How long after their payload's moment the current step's notifications are signed (`signedLate`).
    private var signingDelay: Int64 = 0
    private var purchaser: Purchaser?
    private var transactions: [String: TxFacts] = [:]
    private var members: [String: Member] = [:]
    private var memberOrder: [String] = []
    private var consumerGroupId: String?
    private var organizationGroupIds: [String: String] = [:]

    /// `transaction` naming `bundleId` (the simulated app's unless the options name another).
    static func naming(_ bundleId: String, _ transaction: JSONValue) -> JSONValue {
        guard bundleId != SimulatedApp.bundleId, case .object(var members) = transaction else { return transaction }
        members["bundleId"] = .string(bundleId)
        return .object(members)
    }

    init(scenario: Scenario, options: SimulationOptions, groupIndex: Int) {
        self.scenario = scenario
        self.options = options
        self.groupIndex = groupIndex
        var group = scenario.group
        if let shape = options.unclaimShape { group.unclaimShape = shape }
        if let placement = options.revokedSeatPlacement { group.revokedSeatQuantityPlacement = placement }
        self.group = group
        ids = IdentifierFactory(seed: options.seed, groupIndex: options.groupIndexBase + groupIndex)
        start = options.start ?? scenario.start ?? SimulatedApp.defaultStart
        periodLength = Self.scale(group.period.millis, options.accelerated)
        graceLength = Self.scale(group.gracePeriod.millis, options.accelerated)
    }

    static func scale(_ millis: Int64, _ accelerated: Bool) -> Int64 {
        guard accelerated else { return millis }
        let scaled = (millis + (millis >= 0 ? 4320 : -4320)) / 8640
        return millis != 0 && scaled == 0 ? (millis > 0 ? 1 : -1) : scaled
    }

    private func span(_ s: SpanExpression) -> Int64 { Self.scale(s.millis, options.accelerated) + s.periods * periodLength }

    /// The gap between consecutive events of one step (one minute, scaled).
    private var followUpGap: Int64 { Self.scale(60_000, options.accelerated) }

    // MARK: Running

    func run() throws(SimulatorError) -> EpochMillis {
        var previousStepTime = start
        for (index, step) in scenario.steps.enumerated() {
            stepIndex = index
            let nominal = try resolve(step.at ?? defaultTime(for: step.action), previous: previousStepTime, index: index, step: step)
            if index > 0, nominal < previousStepTime {
                throw fail(step, "its time \(Timestamp.iso8601(nominal)) is before the previous step (\(Timestamp.iso8601(previousStepTime)))")
            }
            stepTimes.append(nominal)
            signingDelay = step.signedLate.map(span) ?? 0
            try perform(step, at: nominal)
            signingDelay = 0
            previousStepTime = max(nominal, previousStepTime)
        }
        guard !events.isEmpty else { throw SimulatorError("scenario \(scenario.name) emits no events") }
        if let evaluateAt = scenario.evaluateAt {
            return try resolve(evaluateAt, previous: lastEventTime, index: nil, step: nil)
        }
        return lastEventTime
    }

    private func defaultTime(for action: StepAction) -> TimeExpression {
        switch action {
        case .renew, .expire, .billingRetry, .gracePeriod: return TimeExpression(anchor: .periodEnd)
        case .graceExpired: return TimeExpression(anchor: .graceEnd)
        default:
            return stepIndex == 0 ? TimeExpression(anchor: .start) : TimeExpression(anchor: .prev, offset: SpanExpression(millis: 3_600_000))
        }
    }

    private func resolve(_ expression: TimeExpression, previous: EpochMillis, index: Int?, step: Step?) throws(SimulatorError) -> EpochMillis {
        let where_ = index.map { "steps[\($0)] (\(scenario.steps[$0].action.rawValue))" } ?? "evaluateAt"
        let base: EpochMillis
        switch expression.anchor {
        case .start: base = start
        case .prev: base = previous
        case .periodEnd:
            guard let purchaser else { throw SimulatorError("\(where_): periodEnd needs a purchase first") }
            base = purchaser.periodEnd
        case .graceEnd:
            guard let end = purchaser?.graceEnd else { throw SimulatorError("\(where_): graceEnd needs a gracePeriod step first") }
            base = end
        }
        return base + span(expression.offset)
    }

    private func fail(_ step: Step, _ message: String) -> SimulatorError {
        SimulatorError("steps[\(stepIndex)] (\(step.action.rawValue)\(step.member.map { " \($0)" } ?? "")): \(message)")
    }

    // MARK: Emitting

    private func nextTime(_ nominal: EpochMillis) -> EpochMillis {
        let time = lastEventTime == .min ? nominal : max(nominal, lastEventTime + 1)
        lastEventTime = time
        return time
    }

    @discardableResult
    private func notify(_ type: String, _ subtype: String?, at nominal: EpochMillis, transaction: TxFacts?, renewal: RenewalFacts?,
                        status: Int64?, label: String, purchaserOTID: String?, includeData: Bool = true,
                        unclaimSeatIds: [String]? = nil) -> (id: String, time: EpochMillis) {
        let time = nextTime(nominal + signingDelay)
        let uuid = ids.uuid()
        var payload: [String: JSONValue] = [
            "notificationType": .string(type),
            "notificationUUID": .string(uuid),
            "version": "2.0",
            "signedDate": .int(time),
        ]
        if let subtype { payload["subtype"] = .string(subtype) }
        if let unclaimSeatIds { payload["unclaimInfo"] = .object(["unclaimSeatIds": .array(unclaimSeatIds.map(JSONValue.string))]) }
        var data: [String: JSONValue]?
        if includeData {
            var d: [String: JSONValue] = [
                "appAppleId": .int(SimulatedApp.appAppleId),
                "bundleId": .string(options.bundleId),
                "bundleVersion": .string(SimulatedApp.bundleVersion),
                "environment": .string(SimulatedApp.environment),
            ]
            if let status { d["status"] = .int(status) }
            data = d
        }
        let draft = NotificationDraft(payload: payload, data: data,
                                      transaction: includeData ? transaction.map { Self.naming(options.bundleId, $0.json(signedDate: time)) } : nil,
                                      renewal: includeData ? renewal?.json(signedDate: time) : nil)
        if includeData, let transaction {
            truth.transactions.append(TxVersion(tx: transaction, signedDate: time, occurredAt: time, eventId: uuid))
        }
        if includeData, let renewal {
            truth.renewals.append(RenewalVersion(renewal: renewal, signedDate: time, occurredAt: time, eventId: uuid))
        }
        truth.notifications.append(NotificationFact(eventId: uuid, type: type, subtype: subtype, signedDate: time,
                                                    purchaserOTID: purchaserOTID, unclaimSeatIds: unclaimSeatIds ?? []))
        events.append(PlannedEvent(index: events.count, eventId: uuid, kind: .notification, occurredAt: time,
                                   label: ([type, subtype].compactMap { $0 }.joined(separator: "/")) + " " + label,
                                   stepIndex: stepIndex, body: .notification(draft)))
        return (uuid, time)
    }

    @discardableResult
    private func apiResponse(_ endpoint: String, _ method: String, _ path: String, requestBody: JSONValue, body: JSONValue,
                             at nominal: EpochMillis, context: JSONValue = .object([:]), status: Int64 = 200,
                             label: String) -> (id: String, time: EpochMillis) {
        let time = nextTime(nominal)
        let inner: JSONValue = .object([
            "endpoint": .string(endpoint),
            "method": .string(method),
            "path": .string(path),
            "requestBody": requestBody,
            "status": .int(status),
            "body": body,
            "respondedAt": .string(Timestamp.iso8601(time)),
            "environment": .string(SimulatedApp.environment),
            "context": context,
        ])
        let data = JSONValue.object(["apiResponse": inner]).canonicalData()
        let line = String(decoding: data, as: UTF8.self)
        let id = SHA256Digest.hex(data)
        events.append(PlannedEvent(index: events.count, eventId: id, kind: .apiResponse, occurredAt: time,
                                   label: endpoint + " " + label, stepIndex: stepIndex, body: .apiResponse(line: line)))
        return (id, time)
    }

    // MARK: Pricing

    /// Tiers for seats numbered `from...to` (1-based) under the group's price bands.
    private func tiers(from: Int, to: Int) -> [Tier] {
        guard to >= from else { return [] }
        var result: [Tier] = []
        var lower = 1
        for band in group.priceBands {
            let upper = band.upTo ?? Int.max
            let overlap = min(upper, to) - max(lower, from) + 1
            if overlap > 0 { result.append(Tier(price: band.price, quantity: overlap)) }
            if upper == Int.max { break }
            lower = upper + 1
        }
        if let last = group.priceBands.last, let lastUpper = last.upTo, to > lastUpper {
            // Seats beyond a bounded last band are priced like it.
            let beyond = to - max(from, lastUpper + 1) + 1
            if beyond > 0 {
                if result.last?.price == last.price { result[result.count - 1].quantity += beyond } else {
                    result.append(Tier(price: last.price, quantity: beyond))
                }
            }
        }
        return result
    }

    private func averagePrice(_ tiers: [Tier]) -> Int64 {
        let seats = tiers.reduce(0) { $0 + $1.quantity }
        guard seats > 0 else { return 0 }
        let total = tiers.reduce(Int64(0)) { $0 + $1.price * Int64($1.quantity) }
        return (total + Int64(seats) / 2) / Int64(seats)
    }

    // MARK: State helpers

    private func requirePurchaser(_ step: Step) throws(SimulatorError) -> Purchaser {
        guard let purchaser else { throw fail(step, "no group yet: add a purchase step first") }
        return purchaser
    }

    private var totalSeats: Int {
        guard let purchaser else { return 0 }
        return purchaser.periodTransactionIds.reduce(0) { $0 + (transactions[$1]?.netSeats ?? 0) }
    }

    private var latestPurchaserTransaction: TxFacts? {
        guard let id = purchaser?.periodTransactionIds.last else { return nil }
        return transactions[id]
    }

    private var activeAppleMembers: [Member] {
        memberOrder.compactMap { members[$0] }.filter { $0.kind == .apple && $0.active }
    }

    private var activeClaims: [Member] {
        memberOrder.compactMap { members[$0] }.filter { $0.kind == .claim && $0.claimActive }
    }

    private func purchaserRenewal(autoRenew: Bool? = nil, expirationIntent: Int64? = nil) -> RenewalFacts? {
        guard let p = purchaser else { return nil }
        let tiers = self.tiers(from: 1, to: p.renewalQuantity)
        return RenewalFacts(originalTransactionId: p.originalTransactionId, productId: group.productId,
                            autoRenewStatus: autoRenew ?? p.autoRenew, renewalQuantity: p.renewalQuantity,
                            renewalPriceTiers: tiers, renewalPrice: averagePrice(tiers),
                            isInBillingRetryPeriod: p.billingRetry, gracePeriodExpiresDate: p.graceEnd,
                            renewalDate: p.periodEnd, recentSubscriptionStartDate: p.periodStart,
                            expirationIntent: expirationIntent, appTransactionId: p.appTransactionId)
    }

    private func memberRenewal(_ m: Member, autoRenew: Bool) -> RenewalFacts? {
        guard let otid = m.originalTransactionId, let tx = m.currentTransactionId.flatMap({ transactions[$0] }) else { return nil }
        return RenewalFacts(originalTransactionId: otid, productId: tx.productId, autoRenewStatus: autoRenew,
                            renewalDate: tx.expiresDate, recentSubscriptionStartDate: m.joinedAt,
                            appTransactionId: m.appTransactionId)
    }

    private func status(of p: Purchaser) -> Int64 {
        if p.revoked { return 5 }
        if p.expired { return 2 }
        if p.graceEnd != nil && p.hasAccess { return 4 }
        if p.billingRetry { return 3 }
        return 1
    }

    private func member(_ step: Step, _ kinds: [MemberKind]) throws(SimulatorError) -> Member {
        guard let name = step.member, let m = members[name] else {
            throw fail(step, "unknown member \"\(step.member ?? "")\" (members are created by memberJoin, claimSeat or orgAssign)")
        }
        guard kinds.contains(m.kind) else { throw fail(step, "member \"\(name)\" is a \(m.kind) member") }
        return m
    }

    private func store(_ m: Member) {
        if members[m.name] == nil { memberOrder.append(m.name) }
        members[m.name] = m
    }

    private func ensureConsumerGroupId() -> String {
        if let consumerGroupId { return consumerGroupId }
        let id = ids.groupId()
        consumerGroupId = id
        return id
    }

    // MARK: Steps

    private func perform(_ step: Step, at t: EpochMillis) throws(SimulatorError) {
        switch step.action {
        case .purchase: try purchase(step, t)
        case .memberJoin: try memberJoin(step, t)
        case .memberRemove, .memberLeave, .orgRevoke: try revokeMember(step, t)
        case .getCustomerGroups: try getCustomerGroups(step, t)
        case .getGroupMembers: try getGroupMembers(step, t)
        case .claimSeat: try claimSeat(step, t)
        case .claimSeatRetry: try claimSeatRetry(step, t)
        case .associateSeat: try associateSeat(step, t)
        case .unclaimSeat: try unclaimSeat(step, t)
        case .unclaimSeats: try unclaimSeats(step, t)
        case .getSeatInfo: try getSeatInfo(step, t)
        case .increaseSeats: try increaseSeats(step, t)
        case .decreaseAtRenewal: try decreaseAtRenewal(step, t)
        case .renew: try renew(step, t)
        case .refundSeats: try refundSeats(step, t)
        case .refundFull: try refundFull(step, t)
        case .cancel: try cancel(step, t)
        case .expire: try expire(step, t)
        case .billingRetry, .gracePeriod: try failToRenew(step, t, grace: step.action == .gracePeriod)
        case .graceExpired: try graceExpired(step, t)
        case .recover: try recover(step, t)
        case .resubscribe: try resubscribe(step, t)
        case .orgAssign: try orgAssign(step, t)
        case .familyShare: try familyShare(step, t)
        case .familyRevoke: try familyRevoke(step, t)
        }
    }

    private func purchase(_ step: Step, _ t: EpochMillis) throws(SimulatorError) {
        guard purchaser == nil else { throw fail(step, "the group is already purchased (use resubscribe after expiry)") }
        let seats = step.seats ?? group.seats
        guard ["APPLE", "DEVELOPER"].contains(group.invitationManagement) || !group.invitationManagement.isEmpty else {
            throw fail(step, "group.invitationManagement is empty")
        }
        let otid = ids.transactionId()
        let app = ids.appTransactionId()
        let tiers = self.tiers(from: 1, to: seats)
        let tx = TxFacts(transactionId: otid, originalTransactionId: otid, productId: group.productId, purchaseDate: t,
                         originalPurchaseDate: t, expiresDate: t + periodLength, quantity: seats, ownership: "PURCHASED",
                         transactionReason: "PURCHASE", price: averagePrice(tiers), appTransactionId: app,
                         invitationManagement: group.invitationManagement, priceTiers: tiers,
                         revokedSeatPlacement: group.revokedSeatQuantityPlacement)
        transactions[otid] = tx
        purchaser = Purchaser(originalTransactionId: otid, appTransactionId: app, originalPurchaseDate: t,
                              periodTransactionIds: [otid], periodStart: t, periodEnd: t + periodLength,
                              renewalQuantity: seats, invitationManagement: group.invitationManagement)
        notify("SUBSCRIBED", "INITIAL_BUY", at: t, transaction: tx, renewal: purchaserRenewal(), status: 1,
               label: "purchaser (\(seats) seats)", purchaserOTID: otid)
    }

    private func memberJoin(_ step: Step, _ t: EpochMillis) throws(SimulatorError) {
        let p = try requirePurchaser(step)
        guard p.invitationManagement == "APPLE" else { throw fail(step, "memberJoin needs an Apple-hosted group (invitationManagement APPLE); use claimSeat") }
        guard p.hasAccess else { throw fail(step, "the group subscription is not active") }
        guard let name = step.member else { throw fail(step, "missing member") }
        var m: Member
        var subtype = step.subtype ?? "INITIAL_BUY"
        if let existing = members[name] {
            guard existing.kind == .apple else { throw fail(step, "member \"\(name)\" is not an Apple-hosted member") }
            guard !existing.active else { throw fail(step, "member \"\(name)\" is already in the group") }
            m = existing
            if step.subtype == nil { subtype = "RESUBSCRIBE" }
        } else {
            m = Member(name: name, kind: .apple, appTransactionId: ids.appTransactionId())
            m.originalTransactionId = ids.transactionId()
            m.firstJoinedAt = t
        }
        guard activeAppleMembers.count + 1 < totalSeats else {
            throw fail(step, "no seat available (\(totalSeats) seats: the purchaser and \(activeAppleMembers.count) members)")
        }
        let txId = m.currentTransactionId == nil ? m.originalTransactionId! : ids.transactionId()
        let tiers = transactions[p.periodTransactionIds[0]]?.priceTiers ?? []
        let tx = TxFacts(transactionId: txId, originalTransactionId: m.originalTransactionId!, productId: group.productId,
                         purchaseDate: t, originalPurchaseDate: m.firstJoinedAt, expiresDate: p.periodEnd, quantity: 1,
                         ownership: "ASSIGNED", transactionReason: "PURCHASE", price: 0, appTransactionId: m.appTransactionId,
                         invitationManagement: "APPLE", priceTiers: tiers)
        transactions[txId] = tx
        m.currentTransactionId = txId
        m.joinedAt = t
        m.active = true
        store(m)
        notify("SUBSCRIBED", subtype, at: t, transaction: tx, renewal: memberRenewal(m, autoRenew: true), status: 1,
               label: "member \(name)", purchaserOTID: nil)
    }

    private func revokeMember(_ step: Step, _ t: EpochMillis) throws(SimulatorError) {
        var m = try member(step, step.action == .orgRevoke ? [.organization] : [.apple])
        guard m.active, let txId = m.currentTransactionId, var tx = transactions[txId] else {
            throw fail(step, "member \"\(m.name)\" has no active seat")
        }
        tx.revocationDate = t
        tx.revocationReason = 0
        tx.revocationType = step.revocationType ?? "ASSIGNMENT_REVOKE"
        transactions[txId] = tx
        m.active = false
        store(m)
        notify("REVOKE", nil, at: t, transaction: tx, renewal: memberRenewal(m, autoRenew: false), status: 5,
               label: "member \(m.name) (\(tx.revocationType!))", purchaserOTID: nil)
    }

    private func familyShare(_ step: Step, _ t: EpochMillis) throws(SimulatorError) {
        let p = try requirePurchaser(step)
        guard p.hasAccess else { throw fail(step, "the group subscription is not active") }
        guard let name = step.member, members[name] == nil else { throw fail(step, "member \"\(step.member ?? "")\" already exists") }
        var m = Member(name: name, kind: .family, appTransactionId: ids.appTransactionId())
        let otid = ids.transactionId()
        m.originalTransactionId = otid
        m.firstJoinedAt = t
        // A copy of the group purchase: its multiSeatInfo and quantity come along, yet it is
        // never the purchaser (only the group purchaser can share with family members).
        let purchase = transactions[p.periodTransactionIds[0]]
        let tx = TxFacts(transactionId: otid, originalTransactionId: otid, productId: group.productId, purchaseDate: t,
                         originalPurchaseDate: t, expiresDate: p.periodEnd, quantity: purchase?.quantity ?? 1,
                         ownership: step.ownership ?? "FAMILY_SHARED", transactionReason: "PURCHASE", price: 0,
                         appTransactionId: m.appTransactionId, invitationManagement: p.invitationManagement,
                         priceTiers: purchase?.priceTiers ?? [])
        transactions[otid] = tx
        m.currentTransactionId = otid
        m.joinedAt = t
        m.active = true
        store(m)
        notify("SUBSCRIBED", "INITIAL_BUY", at: t, transaction: tx, renewal: memberRenewal(m, autoRenew: true), status: 1,
               label: "\(tx.ownership) holder \(name)", purchaserOTID: nil)
    }

    private func familyRevoke(_ step: Step, _ t: EpochMillis) throws(SimulatorError) {
        var m = try member(step, [.family])
        guard m.active, let txId = m.currentTransactionId, var tx = transactions[txId] else {
            throw fail(step, "member \"\(m.name)\" has no active copy")
        }
        tx.revocationDate = t
        tx.revocationReason = 0
        tx.revocationType = "FAMILY_REVOKE"
        transactions[txId] = tx
        m.active = false
        store(m)
        notify("REVOKE", nil, at: t, transaction: tx, renewal: memberRenewal(m, autoRenew: false), status: 5,
               label: "family member \(m.name) (FAMILY_REVOKE)", purchaserOTID: nil)
    }

    private func revokeForSeatRefund(_ name: String, at t: EpochMillis) {
        guard var m = members[name], let txId = m.currentTransactionId, var tx = transactions[txId] else { return }
        tx.revocationDate = t
        tx.revocationReason = 0
        transactions[txId] = tx
        m.active = false
        store(m)
        notify("REVOKE", nil, at: t, transaction: tx, renewal: memberRenewal(m, autoRenew: false), status: 5,
               label: "member \(name) (seat refund)", purchaserOTID: nil)
    }

    private func getCustomerGroups(_ step: Step, _ t: EpochMillis) throws(SimulatorError) {
        let customer = step.customer ?? "purchaser"
        let customerId: String
        var groups: [JSONValue] = []
        var linked: [String] = []
        if customer == "purchaser" {
            let p = try requirePurchaser(step)
            customerId = p.originalTransactionId
            if step.placeholder != true {
                let id = ensureConsumerGroupId()
                groups.append(["groupId": .string(id), "groupType": "CONSUMER"])
                linked.append(id)
            }
        } else {
            guard let m = members[customer], m.kind != .claim, let txId = m.currentTransactionId else {
                throw fail(step, "customer \"\(customer)\" is neither \"purchaser\" nor an Apple-hosted or organization member")
            }
            customerId = txId
            if step.placeholder != true, m.active {
                if m.kind == .organization, let org = m.organization, let id = organizationGroupIds[org] {
                    groups.append(["groupId": .string(id), "groupType": "ORGANIZATION",
                                   "roles": [["productId": .string(group.productId), "role": .string(m.role)]]])
                    linked.append(id)
                } else if m.kind == .apple {
                    let id = ensureConsumerGroupId()
                    groups.append(["groupId": .string(id), "groupType": "CONSUMER"])
                    linked.append(id)
                }
            }
        }
        if step.placeholder == true {
            groups = [[
                "groupId": .string(SimulatedApp.placeholderGroupId), "groupType": "ORGANIZATION",
                "roles": [
                    ["productId": .string(SimulatedApp.placeholderRoleProducts[0]), "role": "ADMIN"],
                    ["productId": .string(SimulatedApp.placeholderRoleProducts[1]), "role": "NONE"],
                ],
            ]]
        }
        let r = apiResponse("GetCustomerGroups", "GET", "/groups/v1/currentGroups/\(customerId)", requestBody: .null,
                            body: ["groups": .array(groups)], at: t,
                            label: "\(customer)\(step.placeholder == true ? " (placeholder)" : "")")
        truth.customerGroups.append(CustomerGroupsFact(customerId: customerId, groupIds: linked, at: r.time, eventId: r.id))
    }

    private func getGroupMembers(_ step: Step, _ t: EpochMillis) throws(SimulatorError) {
        if step.placeholder == true {
            let r = apiResponse("GetGroupMembers", "GET", "/groups/v1/group/\(SimulatedApp.placeholderGroupId)?limit=100",
                                requestBody: .null,
                                body: ["members": [["appTransactionId": .string(SimulatedApp.placeholderMemberAppTransactionId)]],
                                       "hasMore": false], at: t, label: "placeholder")
            truth.groupMembers.append(GroupMembersFact(groupId: SimulatedApp.placeholderGroupId,
                                                       appTransactionIds: [SimulatedApp.placeholderMemberAppTransactionId],
                                                       at: r.time, eventId: r.id))
            return
        }
        let p = try requirePurchaser(step)
        let groupId = ensureConsumerGroupId()
        let listed = [p.appTransactionId] + activeAppleMembers.map(\.appTransactionId)
        let r = apiResponse("GetGroupMembers", "GET", "/groups/v1/group/\(groupId)?limit=100", requestBody: .null,
                            body: ["members": .array(listed.map { ["appTransactionId": .string($0)] }), "hasMore": false],
                            at: t, label: "\(listed.count) members")
        truth.groupMembers.append(GroupMembersFact(groupId: groupId, appTransactionIds: listed, at: r.time, eventId: r.id))
    }

    private func seatsPath(_ p: Purchaser) -> String { "/groups/v1/transactions/\(p.originalTransactionId)/seats" }

    private func claimSeat(_ step: Step, _ t: EpochMillis) throws(SimulatorError) {
        let p = try requirePurchaser(step)
        guard p.invitationManagement == "DEVELOPER" else {
            throw fail(step, "Claim Seat needs a developer-hosted group (Apple answers TransactionNotDevManagedGroupError)")
        }
        guard p.hasAccess else { throw fail(step, "the group subscription is not active (Apple answers SubscriptionNotActiveError)") }
        guard let name = step.member else { throw fail(step, "missing member") }
        var m = members[name] ?? Member(name: name, kind: .claim, appTransactionId: ids.appTransactionId())
        guard m.kind == .claim else { throw fail(step, "member \"\(name)\" is not a developer-hosted member") }
        guard !m.claimActive else { throw fail(step, "member \"\(name)\" already holds a claim (use claimSeatRetry to retry)") }
        guard totalSeats - 1 - activeClaims.count >= 1 else {
            throw fail(step, "no seat available: \(totalSeats) seats, \(activeClaims.count) claimed (Apple answers NoAvailableSeatsError)")
        }
        m.requestIdentifier = ids.uuid()
        m.seatClaimId = ids.uuid()
        m.claimActive = true
        var request: [String: JSONValue] = ["requestIdentifier": .string(m.requestIdentifier!)]
        if step.withAppTransactionId == true { request["appTransactionId"] = .string(m.appTransactionId) }
        let r = apiResponse("ClaimSeat", "POST", seatsPath(p), requestBody: .object(request),
                            body: ["seatClaimId": .string(m.seatClaimId!)], at: t,
                            context: ["memberRef": .string(name)], label: name)
        m.claimedAt = r.time
        store(m)
        truth.claims.append(ClaimFact(seatClaimId: m.seatClaimId!, purchaserOTID: p.originalTransactionId,
                                      appTransactionId: step.withAppTransactionId == true ? m.appTransactionId : nil,
                                      memberRef: name, at: r.time, eventId: r.id))
        if step.withAppTransactionId == true {
            truth.associations.append(AssociationFact(seatClaimId: m.seatClaimId!, appTransactionId: m.appTransactionId, at: r.time, eventId: r.id))
        }
    }

    private func claimSeatRetry(_ step: Step, _ t: EpochMillis) throws(SimulatorError) {
        let p = try requirePurchaser(step)
        let m = try member(step, [.claim])
        guard m.claimActive, let requestIdentifier = m.requestIdentifier, let claim = m.seatClaimId else {
            throw fail(step, "member \"\(m.name)\" has no active claim to retry")
        }
        // The retry repeats the request; whether it carried the appTransactionId follows the original.
        let original = truth.claims.last { $0.seatClaimId == claim }
        var request: [String: JSONValue] = ["requestIdentifier": .string(requestIdentifier)]
        if let app = original?.appTransactionId { request["appTransactionId"] = .string(app) }
        let r = apiResponse("ClaimSeat", "POST", seatsPath(p), requestBody: .object(request),
                            body: ["seatClaimId": .string(claim)], at: t, context: ["memberRef": .string(m.name)],
                            label: "\(m.name) (retry, same requestIdentifier)")
        truth.claims.append(ClaimFact(seatClaimId: claim, purchaserOTID: p.originalTransactionId,
                                      appTransactionId: original?.appTransactionId, memberRef: m.name, at: r.time, eventId: r.id))
    }

    private func associateSeat(_ step: Step, _ t: EpochMillis) throws(SimulatorError) {
        let p = try requirePurchaser(step)
        let m = try member(step, [.claim])
        guard m.claimActive, let claim = m.seatClaimId else { throw fail(step, "member \"\(m.name)\" has no active claim") }
        let r = apiResponse("AssociateSeat", "POST", seatsPath(p) + "/\(claim)/associate",
                            requestBody: ["appTransactionId": .string(m.appTransactionId)], body: .null, at: t,
                            context: ["memberRef": .string(m.name)], label: m.name)
        truth.associations.append(AssociationFact(seatClaimId: claim, appTransactionId: m.appTransactionId, at: r.time, eventId: r.id))
    }

    private func unclaimSeat(_ step: Step, _ t: EpochMillis) throws(SimulatorError) {
        let p = try requirePurchaser(step)
        var m = try member(step, [.claim])
        guard m.claimActive, let claim = m.seatClaimId else { throw fail(step, "member \"\(m.name)\" has no active claim") }
        let r = apiResponse("UnclaimSeat", "DELETE", seatsPath(p) + "/\(claim)", requestBody: .null, body: .null, at: t,
                            context: ["memberRef": .string(m.name)], label: m.name)
        m.claimActive = false
        store(m)
        truth.unclaims.append(UnclaimFact(seatClaimId: claim, purchaserOTID: p.originalTransactionId, at: r.time, eventId: r.id))
    }

    private func emitUnclaimSeats(_ names: [String], shape: UnclaimShape, reason: String, at t: EpochMillis) {
        guard let p = purchaser else { return }
        var ids: [String] = []
        for name in names {
            guard var m = members[name], let claim = m.seatClaimId else { continue }
            ids.append(claim)
            m.claimActive = false
            store(m)
        }
        let withData = shape == .dataAndUnclaimInfo
        notify("UNCLAIM_SEATS", nil, at: t, transaction: withData ? latestPurchaserTransaction : nil,
               renewal: withData ? purchaserRenewal() : nil, status: status(of: p),
               label: "\(names.joined(separator: ",")) (\(reason), \(shape.rawValue))", purchaserOTID: p.originalTransactionId,
               includeData: withData, unclaimSeatIds: ids)
    }

    private func unclaimSeats(_ step: Step, _ t: EpochMillis) throws(SimulatorError) {
        let p = try requirePurchaser(step)
        guard p.invitationManagement == "DEVELOPER" else { throw fail(step, "UNCLAIM_SEATS concerns developer-hosted groups only") }
        for name in step.members ?? [] {
            guard let m = members[name], m.kind == .claim, m.claimActive else {
                throw fail(step, "member \"\(name)\" holds no active claim")
            }
        }
        emitUnclaimSeats(step.members ?? [], shape: step.shape ?? group.unclaimShape, reason: step.reason ?? "memberLeft", at: t)
    }

    private func getSeatInfo(_ step: Step, _ t: EpochMillis) throws(SimulatorError) {
        let p = try requirePurchaser(step)
        let claims = activeClaims.compactMap(\.seatClaimId).sorted()
        let total = totalSeats
        let available = max(0, total - 1 - claims.count)
        let r = apiResponse("GetSeatInfo", "GET", seatsPath(p), requestBody: .null,
                            body: ["totalSeatCount": .count(total), "availableSeatCount": .count(available),
                                   "assignedSeatClaimIds": .array(claims.map(JSONValue.string))],
                            at: t, label: "total \(total), available \(available)")
        truth.seatInfos.append(SeatInfoFact(purchaserOTID: p.originalTransactionId, total: total, available: available,
                                            seatClaimIds: claims, at: r.time, eventId: r.id))
    }

    private func increaseSeats(_ step: Step, _ t: EpochMillis) throws(SimulatorError) {
        guard var p = purchaser else { throw fail(step, "no group yet") }
        guard p.hasAccess, !p.billingRetry else { throw fail(step, "the group subscription is not active") }
        let current = totalSeats
        let target = step.seats ?? current
        guard target > current else { throw fail(step, "seats must exceed the current \(current) (Apple: seatReductionNotAllowed)") }
        let tiers = self.tiers(from: current + 1, to: target)
        for id in p.periodTransactionIds { transactions[id]?.seatAddition = true }
        let txId = ids.transactionId()
        let tx = TxFacts(transactionId: txId, originalTransactionId: p.originalTransactionId, productId: group.productId,
                         purchaseDate: t, originalPurchaseDate: p.originalPurchaseDate, expiresDate: p.periodEnd,
                         quantity: target - current, ownership: "PURCHASED", transactionReason: "PURCHASE",
                         price: averagePrice(tiers), appTransactionId: p.appTransactionId,
                         invitationManagement: p.invitationManagement, priceTiers: tiers, seatAddition: true,
                         revokedSeatPlacement: group.revokedSeatQuantityPlacement)
        transactions[txId] = tx
        p.periodTransactionIds.append(txId)
        p.renewalQuantity = target
        purchaser = p
        notify("DID_CHANGE_RENEWAL_PREF", "INCREASE_QUANTITY", at: t, transaction: tx, renewal: purchaserRenewal(), status: 1,
               label: "\(current) → \(target) seats", purchaserOTID: p.originalTransactionId)
    }

    private func decreaseAtRenewal(_ step: Step, _ t: EpochMillis) throws(SimulatorError) {
        guard var p = purchaser else { throw fail(step, "no group yet") }
        let target = step.seats ?? p.renewalQuantity
        guard target <= totalSeats else { throw fail(step, "renewal size \(target) exceeds the current \(totalSeats) seats (use increaseSeats)") }
        p.renewalQuantity = target
        purchaser = p
        notify("DID_CHANGE_RENEWAL_PREF", "DECREASE_QUANTITY", at: t, transaction: latestPurchaserTransaction,
               renewal: purchaserRenewal(), status: status(of: p), label: "renewalQuantity \(target)",
               purchaserOTID: p.originalTransactionId)
    }

    /// Starts a new period for the purchaser with one transaction and renews active Apple-hosted members.
    private func startPeriod(_ p: inout Purchaser, from periodStart: EpochMillis, reason: String) -> TxFacts {
        let seats = p.renewalQuantity
        let tiers = self.tiers(from: 1, to: seats)
        let txId = ids.transactionId()
        let tx = TxFacts(transactionId: txId, originalTransactionId: p.originalTransactionId, productId: group.productId,
                         purchaseDate: periodStart, originalPurchaseDate: p.originalPurchaseDate,
                         expiresDate: periodStart + periodLength, quantity: seats, ownership: "PURCHASED",
                         transactionReason: reason, price: averagePrice(tiers), appTransactionId: p.appTransactionId,
                         invitationManagement: p.invitationManagement, priceTiers: tiers,
                         revokedSeatPlacement: group.revokedSeatQuantityPlacement)
        transactions[txId] = tx
        p.periodTransactionIds = [txId]
        p.periodStart = periodStart
        p.periodEnd = periodStart + periodLength
        p.hasAccess = true
        p.billingRetry = false
        p.graceEnd = nil
        p.expired = false
        p.revoked = false
        return tx
    }

    private func renewMembers(_ p: Purchaser, at t: EpochMillis) {
        var k: Int64 = 1
        for var m in activeAppleMembers {
            guard let otid = m.originalTransactionId else { continue }
            let txId = ids.transactionId()
            let tiers = transactions[p.periodTransactionIds[0]]?.priceTiers ?? []
            let tx = TxFacts(transactionId: txId, originalTransactionId: otid, productId: group.productId,
                             purchaseDate: p.periodStart, originalPurchaseDate: m.firstJoinedAt, expiresDate: p.periodEnd,
                             quantity: 1, ownership: "ASSIGNED", transactionReason: "RENEWAL", price: 0,
                             appTransactionId: m.appTransactionId, invitationManagement: "APPLE", priceTiers: tiers)
            transactions[txId] = tx
            m.currentTransactionId = txId
            store(m)
            notify("DID_RENEW", nil, at: t + k * followUpGap, transaction: tx, renewal: memberRenewal(m, autoRenew: true),
                   status: 1, label: "member \(m.name)", purchaserOTID: nil)
            k += 1
        }
    }

    private func renew(_ step: Step, _ t: EpochMillis) throws(SimulatorError) {
        guard var p = purchaser else { throw fail(step, "no group yet") }
        guard p.hasAccess, !p.billingRetry, !p.revoked else { throw fail(step, "the group subscription is not active (use recover or resubscribe)") }
        guard p.autoRenew else { throw fail(step, "auto-renew is off (cancelled): use expire") }
        if p.invitationManagement == "APPLE", activeAppleMembers.count > p.renewalQuantity - 1 {
            throw fail(step, "renewing at \(p.renewalQuantity) seats leaves room for \(p.renewalQuantity - 1) members but \(activeAppleMembers.count) are in the group: remove members first (memberRemove at periodEnd)")
        }
        let tx = startPeriod(&p, from: p.periodEnd, reason: "RENEWAL")
        purchaser = p
        notify("DID_RENEW", nil, at: t, transaction: tx, renewal: purchaserRenewal(), status: 1,
               label: "purchaser (\(tx.quantity) seats)", purchaserOTID: p.originalTransactionId)
        renewMembers(p, at: t)
    }

    private func refundSeats(_ step: Step, _ t: EpochMillis) throws(SimulatorError) {
        guard var p = purchaser else { throw fail(step, "no group yet") }
        guard p.hasAccess, !p.revoked else { throw fail(step, "the group subscription is not active") }
        let seats = step.seats ?? 1
        let before = totalSeats
        guard seats < before else { throw fail(step, "refunding all \(before) seats is a full refund: use refundFull") }
        // Newest (cheapest) seats first: the most recent transaction of the period gives them up first.
        var remaining = seats
        var changed: [String] = []
        for id in p.periodTransactionIds.reversed() where remaining > 0 {
            guard var tx = transactions[id] else { continue }
            let take = min(remaining, tx.netSeats)
            guard take > 0 else { continue }
            tx.revokedSeatQuantity += take
            transactions[id] = tx
            remaining -= take
            changed.append(id)
        }
        p.renewalQuantity = min(p.renewalQuantity, before - seats)
        purchaser = p
        for id in changed {
            notify("REFUND", "SEATS", at: t, transaction: transactions[id], renewal: purchaserRenewal(), status: 1,
                   label: "\(seats) seats refunded", purchaserOTID: p.originalTransactionId)
        }
        // Unheld seats go first, then the most recently added members; the purchaser keeps theirs.
        let holders = p.invitationManagement == "APPLE"
            ? activeAppleMembers.sorted { ($0.joinedAt, $0.name) > ($1.joinedAt, $1.name) }
            : activeClaims.sorted { ($0.claimedAt, $0.name) > ($1.claimedAt, $1.name) }
        let unheld = max(0, before - 1 - holders.count)
        let toRemove = min(holders.count, max(0, seats - unheld))
        guard toRemove > 0 else { return }
        let victims = holders.prefix(toRemove).map(\.name)
        if p.invitationManagement == "APPLE" {
            for (k, name) in victims.enumerated() { revokeForSeatRefund(name, at: t + Int64(k + 1) * followUpGap) }
        } else {
            emitUnclaimSeats(victims, shape: step.shape ?? group.unclaimShape, reason: "seatRefund", at: t + followUpGap)
        }
    }

    private func refundFull(_ step: Step, _ t: EpochMillis) throws(SimulatorError) {
        guard var p = purchaser else { throw fail(step, "no group yet") }
        guard !p.revoked else { throw fail(step, "already refunded") }
        p.revoked = true
        p.hasAccess = false
        p.autoRenew = false
        purchaser = p
        for (k, id) in p.periodTransactionIds.enumerated() {
            guard var tx = transactions[id] else { continue }
            tx.revocationDate = t
            tx.revocationReason = 0
            tx.revocationType = "REFUND_FULL"
            transactions[id] = tx
            notify("REFUND", nil, at: t + Int64(k), transaction: tx, renewal: purchaserRenewal(), status: 5,
                   label: "transaction \(id) (REFUND_FULL)", purchaserOTID: p.originalTransactionId)
        }
    }

    private func cancel(_ step: Step, _ t: EpochMillis) throws(SimulatorError) {
        guard var p = purchaser else { throw fail(step, "no group yet") }
        guard p.autoRenew else { throw fail(step, "auto-renew is already off") }
        p.autoRenew = false
        purchaser = p
        notify("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", at: t, transaction: latestPurchaserTransaction,
               renewal: purchaserRenewal(), status: status(of: p), label: "purchaser", purchaserOTID: p.originalTransactionId)
    }

    private func lapseMembers() {
        for var m in activeAppleMembers {
            m.active = false
            store(m)
        }
    }

    private func expire(_ step: Step, _ t: EpochMillis) throws(SimulatorError) {
        guard var p = purchaser else { throw fail(step, "no group yet") }
        guard !p.expired, !p.revoked else { throw fail(step, "already expired or revoked") }
        let subtype: String
        let intent: Int64
        if p.billingRetry {
            subtype = "BILLING_RETRY"
            intent = 2
        } else {
            guard !p.autoRenew else { throw fail(step, "auto-renew is on: add a cancel step first, or use billingRetry") }
            subtype = "VOLUNTARY"
            intent = 1
        }
        p.expired = true
        p.hasAccess = false
        p.billingRetry = false
        p.graceEnd = nil
        p.autoRenew = false
        purchaser = p
        lapseMembers()
        notify("EXPIRED", subtype, at: t, transaction: latestPurchaserTransaction,
               renewal: purchaserRenewal(autoRenew: false, expirationIntent: intent), status: 2, label: "purchaser",
               purchaserOTID: p.originalTransactionId)
    }

    private func failToRenew(_ step: Step, _ t: EpochMillis, grace: Bool) throws(SimulatorError) {
        guard var p = purchaser else { throw fail(step, "no group yet") }
        guard p.hasAccess, !p.billingRetry, p.autoRenew else { throw fail(step, "needs an active, auto-renewing subscription") }
        p.billingRetry = true
        p.graceEnd = grace ? p.periodEnd + graceLength : nil
        p.hasAccess = grace
        purchaser = p
        notify("DID_FAIL_TO_RENEW", grace ? "GRACE_PERIOD" : nil, at: t, transaction: latestPurchaserTransaction,
               renewal: purchaserRenewal(expirationIntent: 2), status: grace ? 4 : 3, label: "purchaser",
               purchaserOTID: p.originalTransactionId)
    }

    private func graceExpired(_ step: Step, _ t: EpochMillis) throws(SimulatorError) {
        guard var p = purchaser, p.graceEnd != nil, p.hasAccess else { throw fail(step, "the group is not in a billing grace period") }
        p.hasAccess = false
        purchaser = p
        notify("GRACE_PERIOD_EXPIRED", nil, at: t, transaction: latestPurchaserTransaction,
               renewal: purchaserRenewal(expirationIntent: 2), status: 3, label: "purchaser", purchaserOTID: p.originalTransactionId)
    }

    private func recover(_ step: Step, _ t: EpochMillis) throws(SimulatorError) {
        guard var p = purchaser, p.billingRetry else { throw fail(step, "the group is not in billing retry") }
        let inGrace = p.graceEnd.map { t < $0 } ?? false
        let tx = startPeriod(&p, from: inGrace ? p.periodEnd : t, reason: "RENEWAL")
        purchaser = p
        notify("DID_RENEW", "BILLING_RECOVERY", at: t, transaction: tx, renewal: purchaserRenewal(), status: 1,
               label: "purchaser", purchaserOTID: p.originalTransactionId)
        renewMembers(p, at: t)
    }

    private func resubscribe(_ step: Step, _ t: EpochMillis) throws(SimulatorError) {
        guard var p = purchaser else { throw fail(step, "no group yet: use purchase") }
        guard p.expired || p.revoked else { throw fail(step, "the subscription has not expired") }
        if let model = step.invitationManagement { p.invitationManagement = model }
        p.renewalQuantity = step.seats ?? p.renewalQuantity
        p.autoRenew = true
        let tx = startPeriod(&p, from: t, reason: "PURCHASE")
        purchaser = p
        notify("SUBSCRIBED", "RESUBSCRIBE", at: t, transaction: tx, renewal: purchaserRenewal(), status: 1,
               label: "purchaser (\(tx.quantity) seats)", purchaserOTID: p.originalTransactionId)
    }

    private func orgAssign(_ step: Step, _ t: EpochMillis) throws(SimulatorError) {
        guard let name = step.member, let org = step.organization else { throw fail(step, "needs member and organization") }
        guard members[name] == nil else { throw fail(step, "member \"\(name)\" already exists") }
        if organizationGroupIds[org] == nil { organizationGroupIds[org] = ids.groupId() }
        var m = Member(name: name, kind: .organization, appTransactionId: ids.appTransactionId())
        let otid = ids.transactionId()
        m.originalTransactionId = otid
        m.currentTransactionId = otid
        m.firstJoinedAt = t
        m.joinedAt = t
        m.active = true
        m.organization = org
        m.role = step.role ?? "NONE"
        let tx = TxFacts(transactionId: otid, originalTransactionId: otid, productId: group.productId, purchaseDate: t,
                         originalPurchaseDate: t, expiresDate: t + periodLength, quantity: 1, ownership: "ASSIGNED",
                         transactionReason: "PURCHASE", price: 0, appTransactionId: m.appTransactionId,
                         invitationManagement: nil)
        transactions[otid] = tx
        store(m)
        notify("SUBSCRIBED", "INITIAL_BUY", at: t, transaction: tx, renewal: memberRenewal(m, autoRenew: true), status: 1,
               label: "organization seat \(name) (\(org))", purchaserOTID: nil)
    }
}
