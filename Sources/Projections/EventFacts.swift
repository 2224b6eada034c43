import AppStoreModels
import LedgerEvents

/// What one transaction version says, reduced to the fields projections read.
public struct TransactionFact: Sendable, Hashable {
    /// This version's transaction id (each renewal and seat addition has its own); the original id when the payload has none.
    public var transactionId: String
    /// The subscription's original transaction id, shared by its renewals and seat additions (a purchaser's is the group key).
    public var originalTransactionId: String
    /// The customer's id per Apple Account and app (what Get Group Members lists); `nil` when the payload has none.
    public var appTransactionId: String?
    /// The subscription product bought or held; `nil` when the payload has none.
    public var productId: String?
    /// `inAppOwnershipType`: `PURCHASED` or `nil` for the buyer; `ASSIGNED`, `FAMILY_SHARED` or an unknown value for a holder.
    public var ownership: InAppOwnershipType?
    /// Seats this transaction pays for (a group purchase or a seat addition); a missing value counts as one seat.
    public var quantity: Int64?
    /// When this transaction was charged: the start of its period, or of a mid-period seat addition.
    public var purchaseDate: EpochMillis?
    /// End of the billing period it covers; a purchaser's transactions with the same date form one period.
    public var expiresDate: EpochMillis?
    /// When Apple revoked or refunded this transaction, if it did: access from it ends at this date.
    public var revocationDate: EpochMillis?
    /// Why it was revoked: `REFUND_FULL`, `REFUND_PRORATED`, `FAMILY_REVOKE`, `ASSIGNMENT_REVOKE`, or an unknown value verbatim.
    public var revocationType: RevocationType?
    /// Seats Apple refunded from this transaction (top level or in `multiSeatInfo`), subtracted from the period's paid seats.
    public var revokedSeatQuantity: Int64?
    /// Who hosts the group's invitations (`APPLE` or `DEVELOPER`, from `multiSeatInfo`); `nil` when not multiseat.
    public var invitationManagement: InvitationManagement?
    /// Whether the payload carries `multiSeatInfo`; with the customer's own purchase, it is a group purchaser's transaction.
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
    /// The subscription this renewal info describes.
    public var originalTransactionId: String
    /// Seats the next period will have (top level or in `multiSeatInfo`): `seats.renewalTotal` when present.
    public var renewalQuantity: Int64?
    /// When billing grace ends after a failed renewal: the purchaser and linked members keep access until then.
    public var gracePeriodExpiresDate: EpochMillis?
    /// Whether Apple is still retrying a failed renewal charge (the `BILLING_RETRY` status once the period and grace are over).
    public var isInBillingRetryPeriod: Bool?
    /// Apple's `autoRenewStatus` (1 on, 0 off); not read by projections: turning it off changes nothing before the period end.
    public var autoRenewStatus: Int64?
    /// When Apple signed this renewal info version (the latest one wins).
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
    /// Apple's count of the group's paid seats (compared with our `seats.total`); `nil` when the response omits it.
    public var totalSeatCount: Int64?
    /// Apple's count of seats still free (compared with our `seats.available`); `nil` when the response omits it.
    public var availableSeatCount: Int64?
    /// The seat claims Apple lists as held (each belongs to the purchaser in the path); `[]` when the response omits them.
    public var assignedSeatClaimIds: [String]
}

/// One group from a Get Customer Groups response.
public struct CustomerGroupFact: Sendable, Hashable {
    /// A group the customer belongs to (the sandbox placeholder `900000000000000000` is ignored when linking).
    public var groupId: String
    /// Apple's `groupType` (`CONSUMER`, `ORGANIZATION`, …) verbatim; recorded, not used to link groups.
    public var groupType: String?
}

/// Everything projections need from one event, extracted once (pure) from its decoded payload.
///
/// A value whose fields live in one copy-on-write box (see `storage` for the targets that need it).
///
/// ```swift
/// let facts = EventFacts(event)   // from a LedgerEvent
/// facts.transactions.first?.quantity
/// ```
public struct EventFacts: Sendable, Hashable {
    /// The event's position in the ledger's log (gap-free, from 1).
    public var position: Int64
    /// When Apple signed the event (`signedDate`) or the API responded (`respondedAt`): none of it takes effect later.
    public var occurredAt: EpochMillis
    /// When the ledger recorded the event (transaction time: what `--known-at` and retractions compare with).
    public var recordedAt: EpochMillis

    /// The event id (notification UUID or API-response id).
    public var eventId: String {
        get { storage.fields.eventId }
        set { uniqueStorage().fields.eventId = newValue }
        _modify { yield &uniqueStorage().fields.eventId }
    }
    /// Notification or API response.
    public var kind: EventKind {
        get { storage.fields.kind }
        set { uniqueStorage().fields.kind = newValue }
        _modify { yield &uniqueStorage().fields.kind }
    }
    /// Where the event came from (webhook, file, spool, …).
    public var origin: EventOrigin {
        get { storage.fields.origin }
        set { uniqueStorage().fields.origin = newValue }
        _modify { yield &uniqueStorage().fields.origin }
    }
    /// `notificationType` (notifications) or endpoint name (API responses).
    public var type: String? {
        get { storage.fields.type }
        set { uniqueStorage().fields.type = newValue }
        _modify { yield &uniqueStorage().fields.type }
    }
    /// The notification subtype.
    public var subtype: String? {
        get { storage.fields.subtype }
        set { uniqueStorage().fields.subtype = newValue }
        _modify { yield &uniqueStorage().fields.subtype }
    }
    /// HTTP status (API responses).
    public var status: Int64? {
        get { storage.fields.status }
        set { uniqueStorage().fields.status = newValue }
        _modify { yield &uniqueStorage().fields.status }
    }
    /// The signed transactions the event carries.
    public var transactions: [TransactionFact] {
        get { storage.fields.transactions }
        set { uniqueStorage().fields.transactions = newValue }
        _modify { yield &uniqueStorage().fields.transactions }
    }
    /// The signed renewal infos the event carries.
    public var renewals: [RenewalFact] {
        get { storage.fields.renewals }
        set { uniqueStorage().fields.renewals = newValue }
        _modify { yield &uniqueStorage().fields.renewals }
    }
    /// `unclaimInfo.unclaimSeatIds`.
    public var unclaimSeatIds: [String] {
        get { storage.fields.unclaimSeatIds }
        set { uniqueStorage().fields.unclaimSeatIds = newValue }
        _modify { yield &uniqueStorage().fields.unclaimSeatIds }
    }
    /// `unclaimInfo.originalTransactionId`, if Apple sends it.
    public var unclaimOriginalTransactionId: String? {
        get { storage.fields.unclaimOriginalTransactionId }
        set { uniqueStorage().fields.unclaimOriginalTransactionId = newValue }
        _modify { yield &uniqueStorage().fields.unclaimOriginalTransactionId }
    }
    /// The purchaser's original transaction id from a seat endpoint path.
    public var seatPathTransactionId: String? {
        get { storage.fields.seatPathTransactionId }
        set { uniqueStorage().fields.seatPathTransactionId = newValue }
        _modify { yield &uniqueStorage().fields.seatPathTransactionId }
    }
    /// The claim id from an Unclaim/Associate path.
    public var seatPathClaimId: String? {
        get { storage.fields.seatPathClaimId }
        set { uniqueStorage().fields.seatPathClaimId = newValue }
        _modify { yield &uniqueStorage().fields.seatPathClaimId }
    }
    /// `seatClaimId` returned by Claim Seat.
    public var claimedSeatId: String? {
        get { storage.fields.claimedSeatId }
        set { uniqueStorage().fields.claimedSeatId = newValue }
        _modify { yield &uniqueStorage().fields.claimedSeatId }
    }
    /// `requestIdentifier` of a Claim Seat request.
    public var requestIdentifier: String? {
        get { storage.fields.requestIdentifier }
        set { uniqueStorage().fields.requestIdentifier = newValue }
        _modify { yield &uniqueStorage().fields.requestIdentifier }
    }
    /// `appTransactionId` of a Claim/Associate request.
    public var requestAppTransactionId: String? {
        get { storage.fields.requestAppTransactionId }
        set { uniqueStorage().fields.requestAppTransactionId = newValue }
        _modify { yield &uniqueStorage().fields.requestAppTransactionId }
    }
    /// `context.memberRef` of an envelope.
    public var memberRef: String? {
        get { storage.fields.memberRef }
        set { uniqueStorage().fields.memberRef = newValue }
        _modify { yield &uniqueStorage().fields.memberRef }
    }
    /// The seat information of a notification or response.
    public var seatInfo: SeatInfoFact? {
        get { storage.fields.seatInfo }
        set { uniqueStorage().fields.seatInfo = newValue }
        _modify { yield &uniqueStorage().fields.seatInfo }
    }
    /// The customer id a Get Customer Groups call was made for.
    public var customerId: String? {
        get { storage.fields.customerId }
        set { uniqueStorage().fields.customerId = newValue }
        _modify { yield &uniqueStorage().fields.customerId }
    }
    /// The groups a Get Customer Groups call returned.
    public var customerGroups: [CustomerGroupFact] {
        get { storage.fields.customerGroups }
        set { uniqueStorage().fields.customerGroups = newValue }
        _modify { yield &uniqueStorage().fields.customerGroups }
    }
    /// The group a Get Group Members call listed.
    public var membersGroupId: String? {
        get { storage.fields.membersGroupId }
        set { uniqueStorage().fields.membersGroupId = newValue }
        _modify { yield &uniqueStorage().fields.membersGroupId }
    }
    /// The members' app transaction ids a Get Group Members call listed.
    public var memberAppTransactionIds: [String] {
        get { storage.fields.memberAppTransactionIds }
        set { uniqueStorage().fields.memberAppTransactionIds = newValue }
        _modify { yield &uniqueStorage().fields.memberAppTransactionIds }
    }
    /// The event id a retraction (`seatledger retract`) withdraws from every projection.
    public var retractedEventId: String? {
        get { storage.fields.retractedEventId }
        set { uniqueStorage().fields.retractedEventId = newValue }
        _modify { yield &uniqueStorage().fields.retractedEventId }
    }
    /// The identifiers of the retracted event, so that the retraction is found with the events of
    /// every group the retracted event concerned. They are routing only: never link evidence.
    public var retractedIdentifiers: [String] {
        get { storage.fields.retractedIdentifiers }
        set { uniqueStorage().fields.retractedIdentifiers = newValue }
        _modify { yield &uniqueStorage().fields.retractedIdentifiers }
    }
    /// The app's user id a StoreKit event (`storeKit.userId`) links to the Apple identities it
    /// carries (its transaction's ids, or its AppTransaction's `appTransactionId`): the app
    /// server's word, authenticated by its token. Not an identifier of any group.
    public var linkedUserId: String? {
        get { storage.fields.linkedUserId }
        set { uniqueStorage().fields.linkedUserId = newValue }
        _modify { yield &uniqueStorage().fields.linkedUserId }
    }
    /// The `appTransactionId` of a signed `AppTransaction` the app sent (a StoreKit event).
    public var appTransactionOfApp: String? {
        get { storage.fields.appTransactionOfApp }
        set { uniqueStorage().fields.appTransactionOfApp = newValue }
        _modify { yield &uniqueStorage().fields.appTransactionOfApp }
    }
    /// The `appAccountToken` of a StoreKit event's transaction (the UUID the app set on the purchase).
    public var appAccountToken: String? {
        get { storage.fields.appAccountToken }
        set { uniqueStorage().fields.appAccountToken = newValue }
        _modify { yield &uniqueStorage().fields.appAccountToken }
    }
    /// `errorCode` of an API error body.
    public var errorCode: Int64? {
        get { storage.fields.errorCode }
        set { uniqueStorage().fields.errorCode = newValue }
        _modify { yield &uniqueStorage().fields.errorCode }
    }

    /// Every field but the position and the two dates, boxed (copy on write): a copy of the value
    /// is one reference count instead of one per string and array, since a fold copies a group's
    /// facts many times (filtered, sorted, indexed, iterated).
    private var storage: Storage

    /// The boxed fields.
    struct Fields: Sendable, Hashable {
        var eventId: String
        var kind: EventKind
        var origin: EventOrigin
        var type: String? = nil
        var subtype: String? = nil
        var status: Int64? = nil
        var transactions: [TransactionFact] = []
        var renewals: [RenewalFact] = []
        var unclaimSeatIds: [String] = []
        var unclaimOriginalTransactionId: String? = nil
        var seatPathTransactionId: String? = nil
        var seatPathClaimId: String? = nil
        var claimedSeatId: String? = nil
        var requestIdentifier: String? = nil
        var requestAppTransactionId: String? = nil
        var memberRef: String? = nil
        var seatInfo: SeatInfoFact? = nil
        var customerId: String? = nil
        var customerGroups: [CustomerGroupFact] = []
        var membersGroupId: String? = nil
        var memberAppTransactionIds: [String] = []
        var retractedEventId: String? = nil
        var retractedIdentifiers: [String] = []
        var errorCode: Int64? = nil
        var linkedUserId: String? = nil
        var appTransactionOfApp: String? = nil
        var appAccountToken: String? = nil
    }

    /// The box of ``Fields``.
    ///
    /// `@unchecked Sendable` is safe: the box is only mutated through ``uniqueStorage()``, that
    /// is while no other `EventFacts` value (on any thread) refers to it; shared, it is read-only.
    final class Storage: @unchecked Sendable {
        var fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    /// The box, copied first if another value shares it.
    private mutating func uniqueStorage() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
        return storage
    }

    /// Equal when the positions, dates and fields are (the same box is equal without comparing).
    public static func == (lhs: EventFacts, rhs: EventFacts) -> Bool {
        lhs.position == rhs.position && lhs.occurredAt == rhs.occurredAt && lhs.recordedAt == rhs.recordedAt
            && (lhs.storage === rhs.storage || lhs.storage.fields == rhs.storage.fields)
    }

    /// Hashes the positions, dates and fields.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(position)
        hasher.combine(occurredAt)
        hasher.combine(recordedAt)
        hasher.combine(storage.fields)
    }


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
        storage = Storage(Fields(eventId: eventId, kind: kind, origin: origin))
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
            "signedDate", "appAccountToken",
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
            "storeKit": .members(["userId": .all]),
            "appTransaction": .members(["appTransactionId": .all]),
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
        if event.kind == .storeKit {
            linkedUserId = decoded["storeKit"]?["userId"]?.stringValue
            appTransactionOfApp = decoded["appTransaction"]?["appTransactionId"]?.stringValue
            appAccountToken = decoded["transactions"]?.arrayValue?.first?["payload"]?["appAccountToken"]?.stringValue
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

extension EventFacts {
    /// Whether these facts mention any of `ids` (``identifiers`` meets `ids`, without building it).
    public func mentions(anyOf ids: Set<String>) -> Bool {
        struct Mentioned: Error {}
        do {
            try forEachIdentifier { if ids.contains($0) { throw Mentioned() } }
            return false
        } catch {
            return true
        }
    }
}

extension GroupMembership {
    /// Whether an event with these facts concerns this group.
    public func concerns(_ facts: EventFacts) -> Bool {
        facts.mentions(anyOf: identifiers.union(aliases))
    }

    /// The facts that concern this group (the group's identifier set is built once).
    public func relevant(_ facts: [EventFacts]) -> [EventFacts] {
        let mine = identifiers.union(aliases)
        return facts.subset { $0.mentions(anyOf: mine) }
    }
}
