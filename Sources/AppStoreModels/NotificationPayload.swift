/// A decoded `ResponseBodyV2DecodedPayload` (App Store Server Notifications V2).
///
/// The nested `signedTransactionInfo` / `signedRenewalInfo` stay as JWS strings here; the ingest
/// pipeline verifies them and attaches the decoded ``TransactionPayload`` / ``RenewalInfoPayload``.
public struct NotificationPayload: Sendable, Hashable {
    /// The payload exactly as decoded, every field kept.
    public let json: JSONValue
    /// Apple's `notificationType`: the event the notification reports; verbatim, unknown values kept.
    public let notificationType: NotificationType?
    /// Apple's `subtype`: optional detail of the `notificationType`; verbatim, unknown values kept.
    public let subtype: NotificationSubtype?
    /// Apple's idempotency key: a retry carries the same UUID.
    public let notificationUUID: String?
    /// Apple's `version`: the notification format version (`"2.0"`).
    public let version: String?
    /// Apple's `signedDate`: when the App Store signed the notification; the event's `occurredAt`.
    public let signedDate: EpochMillis?
    /// The `data` member (app metadata and signed transaction / renewal info).
    public let data: NotificationData?
    /// The `summary` member (renewal-extension summaries).
    public let summary: NotificationSummary?
    /// The `unclaimInfo` member (`UNCLAIM_SEATS`).
    public let unclaimInfo: UnclaimInfo?

    /// Reads every known field from a decoded notification payload.
    public init(json: JSONValue) {
        self.json = json
        notificationType = json["notificationType"]?.stringValue.map(NotificationType.init(rawValue:))
        subtype = json["subtype"]?.stringValue.map(NotificationSubtype.init(rawValue:))
        notificationUUID = json["notificationUUID"]?.stringValue
        version = json["version"]?.stringValue
        signedDate = Timestamp.parse(json["signedDate"])
        data = json["data"].flatMap { $0.objectValue == nil ? nil : NotificationData(json: $0) }
        summary = json["summary"].flatMap { $0.objectValue == nil ? nil : NotificationSummary(json: $0) }
        unclaimInfo = json["unclaimInfo"].flatMap { $0.objectValue == nil ? nil : UnclaimInfo(json: $0) }
    }

    /// The members that can name the app, in the order they are consulted.
    public static let identityMembers = ["data", "summary", "appData", "externalPurchaseToken", "unclaimInfo"]

    /// The app the payload names and the member it comes from: the first of ``identityMembers``
    /// present (and not `null`); `nil` when none is.
    ///
    /// An `externalPurchaseToken` carries no `environment`: as Apple's App Store Server Library
    /// reads it, its `externalPurchaseId` names it, `SANDBOX` at its start for Sandbox and
    /// Production otherwise (``externalPurchaseEnvironment(_:)``).
    public var appIdentity: AppIdentity? {
        for member in Self.identityMembers {
            guard let value = json[member], !value.isNull else { continue }
            let environment = member == "externalPurchaseToken"
                ? Self.externalPurchaseEnvironment(value)
                : value["environment"]?.stringValue.map(AppStoreEnvironment.init(rawValue:))
            return AppIdentity(member: member, bundleId: value["bundleId"]?.stringValue, environment: environment,
                               appAppleId: value["appAppleId"]?.int64Value)
        }
        return nil
    }

    /// The environment of an `externalPurchaseToken` member, by Apple's rule: Sandbox when its
    /// `externalPurchaseId` starts with `SANDBOX` (`SANDBOX_…`), else Production (an absent id too).
    public static func externalPurchaseEnvironment(_ token: JSONValue) -> AppStoreEnvironment {
        token["externalPurchaseId"]?.stringValue?.hasPrefix("SANDBOX") == true ? .sandbox : .production
    }

    /// The bundle id the payload names (see ``appIdentity``).
    public var bundleId: String? { appIdentity?.bundleId }
    /// The environment the payload names (see ``appIdentity``).
    public var environment: AppStoreEnvironment? { appIdentity?.environment }
    /// The app Apple id the payload names (see ``appIdentity``).
    public var appAppleId: Int64? { appIdentity?.appAppleId }
}

/// The app a notification payload names (bundle id, environment, app Apple id) and where.
public struct AppIdentity: Sendable, Hashable {
    /// The payload member it was read from (`data`, `summary`, `appData`, `externalPurchaseToken`, `unclaimInfo`).
    public let member: String
    /// The member's `bundleId`: the app's bundle identifier, if named.
    public let bundleId: String?
    /// The member's `environment`: `Production` or `Sandbox` (verbatim), if named.
    public let environment: AppStoreEnvironment?
    /// The member's `appAppleId`: the app's numeric App Store id, if named.
    public let appAppleId: Int64?

    /// Whether the member names no app at all.
    public var namesNoApp: Bool { bundleId == nil && environment == nil && appAppleId == nil }
}

/// The `data` member of a notification payload.
public struct NotificationData: Sendable, Hashable {
    /// Apple's `appAppleId`: the app's numeric App Store id (checked against a Production ledger's).
    public let appAppleId: Int64?
    /// Apple's `bundleId`: the bundle identifier of the app the notification is for.
    public let bundleId: String?
    /// Apple's `bundleVersion`: the build version of the app.
    public let bundleVersion: String?
    /// Apple's `environment`: `Production` or `Sandbox` (verbatim; unknown values kept).
    public let environment: AppStoreEnvironment?
    /// The nested transaction JWS, verified separately.
    public let signedTransactionInfo: String?
    /// The nested renewal-info JWS, verified separately.
    public let signedRenewalInfo: String?
    /// Subscription status (1 active, 2 expired, 3 billing retry, 4 grace, 5 revoked).
    public let status: Int64?

    /// Reads the known fields of `data`.
    public init(json: JSONValue) {
        appAppleId = json["appAppleId"]?.int64Value
        bundleId = json["bundleId"]?.stringValue
        bundleVersion = json["bundleVersion"]?.stringValue
        environment = json["environment"]?.stringValue.map(AppStoreEnvironment.init(rawValue:))
        signedTransactionInfo = json["signedTransactionInfo"]?.stringValue
        signedRenewalInfo = json["signedRenewalInfo"]?.stringValue
        status = json["status"]?.int64Value
    }
}

/// The `summary` member of a notification payload.
public struct NotificationSummary: Sendable, Hashable {
    /// Apple's `appAppleId`: the app's numeric App Store id.
    public let appAppleId: Int64?
    /// Apple's `bundleId`: the bundle identifier of the app the summary is for.
    public let bundleId: String?
    /// Apple's `environment`: `Production` or `Sandbox` (verbatim; unknown values kept).
    public let environment: AppStoreEnvironment?
    /// Apple's `requestIdentifier`: the id of the mass renewal-date extension request summarized.
    public let requestIdentifier: String?

    /// Reads the known fields of `summary`.
    public init(json: JSONValue) {
        appAppleId = json["appAppleId"]?.int64Value
        bundleId = json["bundleId"]?.stringValue
        environment = json["environment"]?.stringValue.map(AppStoreEnvironment.init(rawValue:))
        requestIdentifier = json["requestIdentifier"]?.stringValue
    }
}

/// The `unclaimInfo` member of an `UNCLAIM_SEATS` notification.
///
/// Apple documents only `unclaimSeatIds`; the other fields are read if present (assumption
/// recorded in `Events/notifications/UNCLAIM_SEATS.md`).
public struct UnclaimInfo: Sendable, Hashable {
    /// Seat claims the App Store has already released.
    public let unclaimSeatIds: [String]
    /// `bundleId`, if Apple sends it (undocumented): the app the released claims belong to.
    public let bundleId: String?
    /// `environment`, if Apple sends it (undocumented): `Production` or `Sandbox`, verbatim.
    public let environment: AppStoreEnvironment?
    /// `appAppleId`, if Apple sends it (undocumented): the app's numeric App Store id.
    public let appAppleId: Int64?
    /// The purchaser's original transaction id, if Apple sends it.
    public let originalTransactionId: String?

    /// Reads the known fields of `unclaimInfo`.
    public init(json: JSONValue) {
        unclaimSeatIds = json["unclaimSeatIds"]?.arrayValue?.compactMap(\.stringValue) ?? []
        bundleId = json["bundleId"]?.stringValue
        environment = json["environment"]?.stringValue.map(AppStoreEnvironment.init(rawValue:))
        appAppleId = json["appAppleId"]?.int64Value
        originalTransactionId = json["originalTransactionId"]?.stringValue
    }
}
