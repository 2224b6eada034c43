import AppStoreModels
import LedgerEvents

/// What one transaction version says, reduced to the fields projections read.
public struct TransactionFact: Sendable, Hashable {
    public var transactionId: String
    public var originalTransactionId: String
    public var appTransactionId: String?
    public var productId: String?
    public var ownership: InAppOwnershipType?
    public var quantity: Int64?
    public var purchaseDate: EpochMillis?
    public var expiresDate: EpochMillis?
    public var revocationDate: EpochMillis?
    public var revocationType: RevocationType?
    public var revokedSeatQuantity: Int64?
    public var invitationManagement: InvitationManagement?
    public var isMultiSeat: Bool
    /// The transaction's own `signedDate` (orders versions of the same transaction).
    public var signedDate: EpochMillis?

    /// Whether the customer bought this transaction themselves (`PURCHASED`, or no ownership given).
    public var isOwnPurchase: Bool { ownership == nil || ownership == .purchased }
    /// Whether this is a group purchaser's transaction (multiseat and bought by the customer).
    ///
    /// A `FAMILY_SHARED` copy of a group purchase is never the purchaser, whatever fields it
    /// carries (only the group purchaser can share their access with family members), and a
    /// transaction with an ownership value Apple has not documented is its holder's access, not a
    /// group purchase.
    public var isPurchaser: Bool { isMultiSeat && isOwnPurchase }
    /// Whether this transaction gives access to someone who did not buy it: an `ASSIGNED` seat
    /// holder, a `FAMILY_SHARED` family member, or an ownership value nobody documented yet. Each
    /// such holder has access from their own transaction.
    public var isHeldAccess: Bool { !isOwnPurchase }
    /// Whether this is an assigned seat holder's transaction.
    public var isAssigned: Bool { ownership == .assigned }

    /// A transaction fact with only its identifiers (the codec fills the rest).
    init(transactionId: String, originalTransactionId: String, isMultiSeat: Bool) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.isMultiSeat = isMultiSeat
    }

    /// Reduces a decoded transaction payload; `nil` without transaction ids.
    public init?(_ payload: TransactionPayload) {
        guard let originalTransactionId = payload.originalTransactionId ?? payload.transactionId else { return nil }
        transactionId = payload.transactionId ?? originalTransactionId
        self.originalTransactionId = originalTransactionId
        appTransactionId = payload.appTransactionId
        productId = payload.productId
        ownership = payload.inAppOwnershipType
        quantity = payload.quantity
        purchaseDate = payload.purchaseDate
        expiresDate = payload.expiresDate
        revocationDate = payload.revocationDate
        revocationType = payload.revocationType
        revokedSeatQuantity = payload.revokedSeatQuantity
        invitationManagement = payload.invitationManagement
        isMultiSeat = payload.isMultiSeat
        signedDate = payload.signedDate
    }
}

/// What one renewal-info version says.
public struct RenewalFact: Sendable, Hashable {
    public var originalTransactionId: String
    public var renewalQuantity: Int64?
    public var gracePeriodExpiresDate: EpochMillis?
    public var isInBillingRetryPeriod: Bool?
    public var autoRenewStatus: Int64?
    public var signedDate: EpochMillis?

    /// A renewal fact with only its transaction id (the codec fills the rest).
    init(originalTransactionId: String) { self.originalTransactionId = originalTransactionId }

    /// Reduces a decoded renewal payload; `nil` without an original transaction id.
    public init?(_ payload: RenewalInfoPayload) {
        guard let id = payload.originalTransactionId else { return nil }
        originalTransactionId = id
        renewalQuantity = payload.renewalQuantity
        gracePeriodExpiresDate = payload.gracePeriodExpiresDate
        isInBillingRetryPeriod = payload.isInBillingRetryPeriod
        autoRenewStatus = payload.autoRenewStatus
        signedDate = payload.signedDate
    }
}

/// A Get Seat Info observation.
public struct SeatInfoFact: Sendable, Hashable {
    public var totalSeatCount: Int64?
    public var availableSeatCount: Int64?
    public var assignedSeatClaimIds: [String]
}

/// One group from a Get Customer Groups response.
public struct CustomerGroupFact: Sendable, Hashable {
    public var groupId: String
    public var groupType: String?
}

/// Everything projections need from one event, extracted once (pure) from its decoded payload.
///
/// A plain value. It was boxed (copy on write) while the rebuild folded a hundred thousand groups
/// and copied their facts many times; no rebuild folds any more (schema 2), and a read folds one
/// group's few dozen facts.
///
/// ```swift
/// let facts = EventFacts(event)   // from a LedgerEvent
/// facts.transactions.first?.quantity
/// ```
public struct EventFacts: Sendable, Hashable {
    public var position: Int64
    public var occurredAt: EpochMillis
    public var recordedAt: EpochMillis

    /// The event id (notification UUID or API-response id).
    public var eventId: String
    /// Notification or API response.
    public var kind: EventKind
    /// Where the event came from (webhook, file, spool, …).
    public var origin: EventOrigin
    /// `notificationType` (notifications) or endpoint name (API responses).
    public var type: String? = nil
    /// The notification subtype.
    public var subtype: String? = nil
    /// HTTP status (API responses).
    public var status: Int64? = nil
    /// The signed transactions the event carries.
    public var transactions: [TransactionFact] = []
    /// The signed renewal infos the event carries.
    public var renewals: [RenewalFact] = []
    /// `unclaimInfo.unclaimSeatIds`.
    public var unclaimSeatIds: [String] = []
    /// `unclaimInfo.originalTransactionId`, if Apple sends it.
    public var unclaimOriginalTransactionId: String? = nil
    /// The purchaser's original transaction id from a seat endpoint path.
    public var seatPathTransactionId: String? = nil
    /// The claim id from an Unclaim/Associate path.
    public var seatPathClaimId: String? = nil
    /// `seatClaimId` returned by Claim Seat.
    public var claimedSeatId: String? = nil
    /// `requestIdentifier` of a Claim Seat request.
    public var requestIdentifier: String? = nil
    /// `appTransactionId` of a Claim/Associate request.
    public var requestAppTransactionId: String? = nil
    /// `context.memberRef` of an envelope.
    public var memberRef: String? = nil
    /// The seat information of a notification or response.
    public var seatInfo: SeatInfoFact? = nil
    /// The customer id a Get Customer Groups call was made for.
    public var customerId: String? = nil
    /// The groups a Get Customer Groups call returned.
    public var customerGroups: [CustomerGroupFact] = []
    /// The group a Get Group Members call listed.
    public var membersGroupId: String? = nil
    /// The members' app transaction ids a Get Group Members call listed.
    public var memberAppTransactionIds: [String] = []
    /// The event id a retraction (`seatledger retract`) withdraws from every projection.
    public var retractedEventId: String? = nil
    /// The identifiers of the retracted event, so that the retraction is found with the events of
    /// every group the retracted event concerned. They are routing only: never link evidence.
    public var retractedIdentifiers: [String] = []
    /// `errorCode` of an API error body.
    public var errorCode: Int64? = nil


    /// Whether this is an API response with a 2xx status.
    public var isSuccessfulResponse: Bool { kind == .apiResponse && (status.map { (200..<300).contains($0) } ?? false) }
    /// The notification type, when this is a notification.
    public var notificationType: NotificationType? { kind == .notification ? type.map(NotificationType.init(rawValue:)) : nil }
    /// The endpoint, when this is an API response.
    public var endpoint: APIEndpoint? { kind == .apiResponse ? type.map(APIEndpoint.init(rawValue:)) : nil }

    /// Facts with only the event metadata (the codec fills the rest).
    init(position: Int64, eventId: String, kind: EventKind, occurredAt: EpochMillis, recordedAt: EpochMillis, origin: EventOrigin) {
        self.position = position
        self.occurredAt = occurredAt
        self.recordedAt = recordedAt
        self.eventId = eventId
        self.kind = kind
        self.origin = origin
    }

    /// The parts of a stored event's decoded JSON that ``init(_:)`` reads: parsing only these
    /// (``JSONValue/parse(_:pruning:)``) gives the same facts for less work (a rebuild deriving
    /// facts from the log skips, for instance, a notification's `data` and the transaction's
    /// prices). Reading another field in ``init(_:)`` (or in the payload types it reads through)
    /// means adding it here; `EventFactsPruningTests` compares both on every sample stream.
    public static let decodedFieldsRead: JSONPruning = {
        let multiSeatInfo = ("multiSeatInfo", JSONPruning.all)
        let transaction = JSONPruning.members(Dictionary(uniqueKeysWithValues: [
            "transactionId", "originalTransactionId", "appTransactionId", "productId", "inAppOwnershipType",
            "quantity", "purchaseDate", "expiresDate", "revocationDate", "revocationType", "revokedSeatQuantity",
            "signedDate",
        ].map { ($0, JSONPruning.all) } + [multiSeatInfo]))
        let renewal = JSONPruning.members(Dictionary(uniqueKeysWithValues: [
            "originalTransactionId", "renewalQuantity", "gracePeriodExpiresDate", "isInBillingRetryPeriod",
            "autoRenewStatus", "signedDate",
        ].map { ($0, JSONPruning.all) } + [multiSeatInfo]))
        return .members([
            "transactionInfo": transaction,
            "renewalInfo": renewal,
            "notification": .members(["unclaimInfo": .all]),
            "transactions": .items(.members(["payload": transaction])),
            "renewalInfos": .items(.members(["payload": renewal])),
            "apiResponse": .all,
            "decision": .all,
        ])
    }()

    /// Extracts the facts of a stored event from its decoded payload.
    public init(_ event: LedgerEvent) {
        self.init(position: event.position, eventId: event.eventId, kind: event.kind, occurredAt: event.occurredAt,
                  recordedAt: event.recordedAt, origin: event.origin)
        type = event.type
        subtype = event.subtype
        status = event.status
        let decoded = event.decoded
        if event.kind == .decision {
            // Only a retraction matters to projections; other decisions (dismissals) carry nothing.
            guard let decision = decoded["decision"], decision["action"]?.stringValue == Retraction.action,
                  let retracted = decision["eventId"]?.stringValue else { return }
            retractedEventId = retracted
            retractedIdentifiers = decision["identifiers"]?.arrayValue?.compactMap(\.stringValue) ?? []
            return
        }
        if event.kind == .notification {
            if let tx = decoded["transactionInfo"], let fact = TransactionFact(TransactionPayload(json: tx)) {
                transactions.append(fact)
            }
            if let ri = decoded["renewalInfo"], let fact = RenewalFact(RenewalInfoPayload(json: ri)) {
                renewals.append(fact)
            }
            if let unclaim = decoded["notification"]?["unclaimInfo"], unclaim.objectValue != nil {
                let info = UnclaimInfo(json: unclaim)
                unclaimSeatIds = info.unclaimSeatIds
                unclaimOriginalTransactionId = info.originalTransactionId
            }
            return
        }
        for item in decoded["transactions"]?.arrayValue ?? [] {
            if let payload = item["payload"], let fact = TransactionFact(TransactionPayload(json: payload)) {
                transactions.append(fact)
            }
        }
        for item in decoded["renewalInfos"]?.arrayValue ?? [] {
            if let payload = item["payload"], let fact = RenewalFact(RenewalInfoPayload(json: payload)) {
                renewals.append(fact)
            }
        }
        guard let inner = decoded["apiResponse"], let envelope = try? APIResponseEnvelope(json: inner) else { return }
        errorCode = envelope.errorCode
        let segments = envelope.pathSegments  // split once for the three readings below
        seatPathTransactionId = APIResponseEnvelope.seatPathTransactionId(in: segments)
        if seatPathTransactionId != nil, envelope.endpoint == .unclaimSeat || envelope.endpoint == .associateSeat {
            seatPathClaimId = APIResponseEnvelope.seatPathClaimId(in: segments)
        }
        requestIdentifier = envelope.requestBody?["requestIdentifier"]?.stringValue
        requestAppTransactionId = envelope.requestBody?["appTransactionId"]?.stringValue
        memberRef = envelope.context?["memberRef"]?.stringValue
        guard envelope.isSuccess else { return }
        let body = envelope.body ?? .object([:])
        switch envelope.endpoint {
        case .claimSeat:
            claimedSeatId = body["seatClaimId"]?.stringValue
        case .getSeatInfo:
            // A body that is not a Get Seat Info object (an HTML page from a proxy, say) says nothing
            // about the claims; only an object with at least one documented field is Apple's view.
            guard case .object(let members) = body,
                  ["totalSeatCount", "availableSeatCount", "assignedSeatClaimIds"].contains(where: { members[$0] != nil })
            else { break }
            seatInfo = SeatInfoFact(totalSeatCount: body["totalSeatCount"]?.int64Value,
                                    availableSeatCount: body["availableSeatCount"]?.int64Value,
                                    assignedSeatClaimIds: body["assignedSeatClaimIds"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        case .getCustomerGroups:
            customerId = APIResponseEnvelope.segment(after: "currentGroups", in: segments)
            customerGroups = (body["groups"]?.arrayValue ?? []).compactMap { group in
                guard let id = group["groupId"]?.stringValue else { return nil }
                return CustomerGroupFact(groupId: id, groupType: group["groupType"]?.stringValue)
            }
        case .getGroupMembers:
            membersGroupId = APIResponseEnvelope.segment(after: "group", in: segments)
            memberAppTransactionIds = GroupMembersBodyReader.members(in: body)
        default:
            break
        }
    }
}

/// Reads Get Group Members bodies, whose array field name Apple has not documented.
///
/// Assumption (recorded in `Events/api/GetGroupMembers.md`): the members are the first array
/// among `members`, `groupMembers`, `items`, `data` whose entries carry `appTransactionId`
/// (objects) or are strings.
public enum GroupMembersBodyReader {
    /// The candidate field names, in order of preference.
    public static let candidateFields = ["members", "groupMembers", "items", "data"]

    /// The `appTransactionId`s a Get Group Members body lists.
    public static func members(in body: JSONValue) -> [String] {
        for field in candidateFields {
            guard let items = body[field]?.arrayValue else { continue }
            let ids = items.compactMap { $0["appTransactionId"]?.stringValue ?? $0.stringValue }
            if !ids.isEmpty || items.isEmpty { return ids }
        }
        return []
    }
}

/// Sandbox placeholders Apple returns for customers in no group; never real data.
public enum SandboxPlaceholder {
    /// The placeholder `groupId`.
    public static let groupId = "900000000000000000"
    /// The placeholder member `appTransactionId`.
    public static let memberAppTransactionId = "700000000000000000"
}

extension EventFacts {
    /// Every identifier these facts mention (to decide which groups an event concerns).
    public var identifiers: Set<String> {
        var ids = Set<String>()
        for tx in transactions {
            ids.insert(tx.transactionId)
            ids.insert(tx.originalTransactionId)
            if let app = tx.appTransactionId { ids.insert(app) }
        }
        for renewal in renewals { ids.insert(renewal.originalTransactionId) }
        ids.formUnion(unclaimSeatIds)
        for id in [unclaimOriginalTransactionId, seatPathTransactionId, seatPathClaimId, claimedSeatId,
                   requestAppTransactionId, customerId, membersGroupId] {
            if let id { ids.insert(id) }
        }
        ids.formUnion(seatInfo?.assignedSeatClaimIds ?? [])
        ids.formUnion(customerGroups.map(\.groupId))
        ids.formUnion(memberAppTransactionIds)
        ids.formUnion(retractedIdentifiers)
        return ids
    }
}

extension EventFacts {
    /// Calls `body` with every identifier these facts mention (the elements of ``identifiers``,
    /// possibly repeated), without building a set.
    public func forEachIdentifier(_ body: (String) throws -> Void) rethrows {
        for tx in transactions {
            try body(tx.transactionId)
            try body(tx.originalTransactionId)
            if let app = tx.appTransactionId { try body(app) }
        }
        for renewal in renewals { try body(renewal.originalTransactionId) }
        for id in unclaimSeatIds { try body(id) }
        if let id = unclaimOriginalTransactionId { try body(id) }
        if let id = seatPathTransactionId { try body(id) }
        if let id = seatPathClaimId { try body(id) }
        if let id = claimedSeatId { try body(id) }
        if let id = requestAppTransactionId { try body(id) }
        if let id = customerId { try body(id) }
        if let id = membersGroupId { try body(id) }
        for id in seatInfo?.assignedSeatClaimIds ?? [] { try body(id) }
        for group in customerGroups { try body(group.groupId) }
        for id in memberAppTransactionIds { try body(id) }
        for id in retractedIdentifiers { try body(id) }
    }
}

extension GroupMembership {
    /// Whether an event with these facts concerns this group.
    public func concerns(_ facts: EventFacts) -> Bool {
        !facts.identifiers.isDisjoint(with: identifiers.union(aliases))
    }

    /// The facts that concern this group (the group's identifier set is built once).
    public func relevant(_ facts: [EventFacts]) -> [EventFacts] {
        let mine = identifiers.union(aliases)
        return facts.filter { !$0.identifiers.isDisjoint(with: mine) }
    }
}
