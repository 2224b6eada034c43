import AppStoreModels
import LedgerEvents

/// Storage form of ``EventFacts``: compact JSON, so a rebuild never re-parses raw payloads.
extension EventFacts {
    /// Encodes the facts (a cache; the raw event stays the truth).
    public var encoded: JSONValue {
        var o: [String: JSONValue] = [
            "p": .int(position), "id": .string(eventId), "k": .string(kind.rawValue), "o": .int(occurredAt),
            "r": .int(recordedAt), "g": .string(origin.rawValue),
        ]
        if let type { o["t"] = .string(type) }
        if let subtype { o["s"] = .string(subtype) }
        if let status { o["st"] = .int(status) }
        if !transactions.isEmpty { o["tx"] = .array(transactions.map(\.encoded)) }
        if !renewals.isEmpty { o["ri"] = .array(renewals.map(\.encoded)) }
        if !unclaimSeatIds.isEmpty { o["uc"] = .array(unclaimSeatIds.map(JSONValue.string)) }
        if let v = unclaimOriginalTransactionId { o["uco"] = .string(v) }
        if let v = seatPathTransactionId { o["spt"] = .string(v) }
        if let v = seatPathClaimId { o["spc"] = .string(v) }
        if let v = claimedSeatId { o["cs"] = .string(v) }
        if let v = requestIdentifier { o["rq"] = .string(v) }
        if let v = requestAppTransactionId { o["ra"] = .string(v) }
        if let v = memberRef { o["mr"] = .string(v) }
        if let info = seatInfo {
            o["si"] = ["t": .optional(info.totalSeatCount), "a": .optional(info.availableSeatCount),
                       "c": .array(info.assignedSeatClaimIds.map(JSONValue.string))]
        }
        if let v = customerId { o["cu"] = .string(v) }
        if !customerGroups.isEmpty {
            o["cg"] = .array(customerGroups.map { ["g": .string($0.groupId), "t": .optional($0.groupType)] })
        }
        if let v = membersGroupId { o["mg"] = .string(v) }
        if !memberAppTransactionIds.isEmpty { o["ma"] = .array(memberAppTransactionIds.map(JSONValue.string)) }
        if let v = errorCode { o["ec"] = .int(v) }
        return .object(o)
    }

    /// Decodes stored facts; `nil` when the stored form is unreadable (then re-derive from the event).
    public init?(encoded o: JSONValue) {
        guard let position = o["p"]?.int64Value, let eventId = o["id"]?.stringValue, let kind = o["k"]?.stringValue,
              let occurredAt = o["o"]?.int64Value, let recordedAt = o["r"]?.int64Value else { return nil }
        self.position = position
        self.eventId = eventId
        self.kind = EventKind(rawValue: kind)
        self.occurredAt = occurredAt
        self.recordedAt = recordedAt
        origin = EventOrigin(rawValue: o["g"]?.stringValue ?? "live")
        type = o["t"]?.stringValue
        subtype = o["s"]?.stringValue
        status = o["st"]?.int64Value
        transactions = o["tx"]?.arrayValue?.compactMap(TransactionFact.init(encoded:)) ?? []
        renewals = o["ri"]?.arrayValue?.compactMap(RenewalFact.init(encoded:)) ?? []
        unclaimSeatIds = o["uc"]?.arrayValue?.compactMap(\.stringValue) ?? []
        unclaimOriginalTransactionId = o["uco"]?.stringValue
        seatPathTransactionId = o["spt"]?.stringValue
        seatPathClaimId = o["spc"]?.stringValue
        claimedSeatId = o["cs"]?.stringValue
        requestIdentifier = o["rq"]?.stringValue
        requestAppTransactionId = o["ra"]?.stringValue
        memberRef = o["mr"]?.stringValue
        if let si = o["si"] {
            seatInfo = SeatInfoFact(totalSeatCount: si["t"]?.int64Value, availableSeatCount: si["a"]?.int64Value,
                                    assignedSeatClaimIds: si["c"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        }
        customerId = o["cu"]?.stringValue
        customerGroups = o["cg"]?.arrayValue?.compactMap { g in
            g["g"]?.stringValue.map { CustomerGroupFact(groupId: $0, groupType: g["t"]?.stringValue) }
        } ?? []
        membersGroupId = o["mg"]?.stringValue
        memberAppTransactionIds = o["ma"]?.arrayValue?.compactMap(\.stringValue) ?? []
        errorCode = o["ec"]?.int64Value
    }
}

extension TransactionFact {
    var encoded: JSONValue {
        var o: [String: JSONValue] = ["id": .string(transactionId), "o": .string(originalTransactionId), "m": .bool(isMultiSeat)]
        if let v = appTransactionId { o["a"] = .string(v) }
        if let v = productId { o["p"] = .string(v) }
        if let v = ownership { o["w"] = .string(v.rawValue) }
        if let v = quantity { o["q"] = .int(v) }
        if let v = purchaseDate { o["pd"] = .int(v) }
        if let v = expiresDate { o["ed"] = .int(v) }
        if let v = revocationDate { o["rd"] = .int(v) }
        if let v = revocationType { o["rt"] = .string(v.rawValue) }
        if let v = revokedSeatQuantity { o["rs"] = .int(v) }
        if let v = invitationManagement { o["im"] = .string(v.rawValue) }
        if let v = signedDate { o["sd"] = .int(v) }
        return .object(o)
    }

    init?(encoded o: JSONValue) {
        guard let id = o["id"]?.stringValue, let otid = o["o"]?.stringValue else { return nil }
        transactionId = id
        originalTransactionId = otid
        isMultiSeat = o["m"]?.boolValue ?? false
        appTransactionId = o["a"]?.stringValue
        productId = o["p"]?.stringValue
        ownership = o["w"]?.stringValue.map(InAppOwnershipType.init(rawValue:))
        quantity = o["q"]?.int64Value
        purchaseDate = o["pd"]?.int64Value
        expiresDate = o["ed"]?.int64Value
        revocationDate = o["rd"]?.int64Value
        revocationType = o["rt"]?.stringValue.map(RevocationType.init(rawValue:))
        revokedSeatQuantity = o["rs"]?.int64Value
        invitationManagement = o["im"]?.stringValue.map(InvitationManagement.init(rawValue:))
        signedDate = o["sd"]?.int64Value
    }
}

extension RenewalFact {
    var encoded: JSONValue {
        var o: [String: JSONValue] = ["o": .string(originalTransactionId)]
        if let v = renewalQuantity { o["q"] = .int(v) }
        if let v = gracePeriodExpiresDate { o["g"] = .int(v) }
        if let v = isInBillingRetryPeriod { o["b"] = .bool(v) }
        if let v = autoRenewStatus { o["a"] = .int(v) }
        if let v = signedDate { o["sd"] = .int(v) }
        return .object(o)
    }

    init?(encoded o: JSONValue) {
        guard let otid = o["o"]?.stringValue else { return nil }
        originalTransactionId = otid
        renewalQuantity = o["q"]?.int64Value
        gracePeriodExpiresDate = o["g"]?.int64Value
        isInBillingRetryPeriod = o["b"]?.boolValue
        autoRenewStatus = o["a"]?.int64Value
        signedDate = o["sd"]?.int64Value
    }
}
