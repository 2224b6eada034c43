import AppStoreModels
import Foundation

/// One App Store Server API request, before the client adds host, prefix and authentication.
///
/// Build calls with the static factories (one per endpoint); the three endpoints Apple refuses
/// for `ASSIGNED` transactions can only be built through ``AssignedTransactionGuard``.
public struct APICall: Sendable {
    /// Which family of paths a call belongs to, i.e. which prefix goes in front.
    public enum PathFamily: Sendable {
        /// `/inApps/v1/…`, `/inApps/v2/…`.
        case classic
        /// `/groups/v1/…` (prefix unknown upstream: ``AppStoreAPIPaths/groupsPrefix``).
        case groups
    }

    /// The endpoint name recorded as the event type.
    public let endpoint: APIEndpoint
    /// `GET`, `POST`, `PUT`, `DELETE`.
    public let method: String
    /// Which prefix applies.
    public let family: PathFamily
    /// The path after the prefix, with its query (e.g. `/v1/notifications/history?paginationToken=…`).
    public let relativePath: String
    /// The JSON request body, if any.
    public let body: JSONValue?
    /// Free-form notes recorded in the envelope's `context` (e.g. `memberRef`).
    public var context: [String: JSONValue]
    /// Set only by ``AssignedTransactionGuard`` for endpoints it protects.
    let ownershipChecked: Bool

    init(endpoint: APIEndpoint, method: String, family: PathFamily, relativePath: String, body: JSONValue? = nil,
         context: [String: JSONValue] = [:], ownershipChecked: Bool = false) {
        self.endpoint = endpoint
        self.method = method
        self.family = family
        self.relativePath = relativePath
        self.body = body
        self.context = context
        self.ownershipChecked = ownershipChecked
    }

    /// The same call with `key` set in its context.
    public func with(context key: String, _ value: JSONValue) -> APICall {
        var copy = self
        copy.context[key] = value
        return copy
    }

    private static func seg(_ value: String) -> String { AppStoreAPIPaths.segment(value) }

    // MARK: Classic endpoints

    /// Get Notification History: `POST /inApps/v1/notifications/history[?paginationToken=…]`.
    public static func getNotificationHistory(_ request: NotificationHistoryRequest, paginationToken: String? = nil) -> APICall {
        let query = paginationToken.map { [("paginationToken", $0)] } ?? []
        return APICall(endpoint: .getNotificationHistory, method: "POST", family: .classic,
                       relativePath: "/v1/notifications/history" + AppStoreAPIPaths.query(query), body: request.json)
    }

    /// Get Transaction History v2: `GET /inApps/v2/history/{transactionId}?[revision=…]&sort=ASCENDING`.
    public static func getTransactionHistory(transactionId: String, revision: String? = nil, sort: String = "ASCENDING") -> APICall {
        var query: [(String, String)] = []
        if let revision { query.append(("revision", revision)) }
        query.append(("sort", sort))
        return APICall(endpoint: .getTransactionHistory, method: "GET", family: .classic,
                       relativePath: "/v2/history/\(seg(transactionId))" + AppStoreAPIPaths.query(query))
    }

    /// Get All Subscription Statuses: `GET /inApps/v1/subscriptions/{transactionId}[?status=…]`.
    public static func getAllSubscriptionStatuses(transactionId: String, status: [Int] = []) -> APICall {
        APICall(endpoint: .getAllSubscriptionStatuses, method: "GET", family: .classic,
                relativePath: "/v1/subscriptions/\(seg(transactionId))" + AppStoreAPIPaths.query(status.map { ("status", String($0)) }))
    }

    /// Get Transaction Info: `GET /inApps/v1/transactions/{transactionId}`.
    public static func getTransactionInfo(transactionId: String) -> APICall {
        APICall(endpoint: .getTransactionInfo, method: "GET", family: .classic, relativePath: "/v1/transactions/\(seg(transactionId))")
    }

    // MARK: Group and seat endpoints

    /// Get Seat Info: `GET /groups/v1/transactions/{originalTransactionId}/seats`.
    public static func getSeatInfo(originalTransactionId: String) -> APICall {
        APICall(endpoint: .getSeatInfo, method: "GET", family: .groups,
                relativePath: "/groups/v1/transactions/\(seg(originalTransactionId))/seats")
    }

    /// Claim Seat: `POST /groups/v1/transactions/{originalTransactionId}/seats` with
    /// `{"requestIdentifier", "appTransactionId"?}`. Persist `requestIdentifier` before sending.
    public static func claimSeat(originalTransactionId: String, requestIdentifier: String, appTransactionId: String? = nil) -> APICall {
        var body: [String: JSONValue] = ["requestIdentifier": .string(requestIdentifier)]
        if let appTransactionId { body["appTransactionId"] = .string(appTransactionId) }
        return APICall(endpoint: .claimSeat, method: "POST", family: .groups,
                       relativePath: "/groups/v1/transactions/\(seg(originalTransactionId))/seats", body: .object(body))
    }

    /// Unclaim Seat: `DELETE /groups/v1/transactions/{originalTransactionId}/seats/{seatClaimId}`.
    public static func unclaimSeat(originalTransactionId: String, seatClaimId: String) -> APICall {
        APICall(endpoint: .unclaimSeat, method: "DELETE", family: .groups,
                relativePath: "/groups/v1/transactions/\(seg(originalTransactionId))/seats/\(seg(seatClaimId))")
    }

    /// Associate Seat: `POST /groups/v1/transactions/{originalTransactionId}/seats/{seatClaimId}/associate`.
    public static func associateSeat(originalTransactionId: String, seatClaimId: String, appTransactionId: String) -> APICall {
        APICall(endpoint: .associateSeat, method: "POST", family: .groups,
                relativePath: "/groups/v1/transactions/\(seg(originalTransactionId))/seats/\(seg(seatClaimId))/associate",
                body: ["appTransactionId": .string(appTransactionId)])
    }

    /// Get Customer Groups: `GET /groups/v1/currentGroups/{id}` (which id kind Apple expects is undocumented).
    public static func getCustomerGroups(customerId: String) -> APICall {
        APICall(endpoint: .getCustomerGroups, method: "GET", family: .groups, relativePath: "/groups/v1/currentGroups/\(seg(customerId))")
    }

    /// Get Group Members: `GET /groups/v1/group/{groupId}?limit=N[&paginationToken=…]`; `limit` 1…100.
    public static func getGroupMembers(groupId: String, limit: Int = 100, paginationToken: String? = nil) throws(APIUsageError) -> APICall {
        guard (1...100).contains(limit) else { throw APIUsageError("Get Group Members limit must be 1…100 (Apple's InvalidLimitError above 100), got \(limit)") }
        var query = [("limit", String(limit))]
        if let paginationToken { query.append(("paginationToken", paginationToken)) }
        return APICall(endpoint: .getGroupMembers, method: "GET", family: .groups,
                       relativePath: "/groups/v1/group/\(seg(groupId))" + AppStoreAPIPaths.query(query))
    }
}

/// A call the client refuses to build or send (bad argument, missing guard).
public struct APIUsageError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    public let message: String
    /// Creates an error.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}

/// The body of Get Notification History.
public struct NotificationHistoryRequest: Sendable, Equatable {
    /// Window start, epoch ms (inclusive).
    public var startDate: EpochMillis
    /// Window end, epoch ms.
    public var endDate: EpochMillis
    /// Only notifications that never reached the server.
    public var onlyFailures: Bool
    /// Optional filter.
    public var notificationType: String?
    /// Optional filter (needs `notificationType`).
    public var notificationSubtype: String?
    /// Optional filter (not together with `notificationType`).
    public var transactionId: String?

    /// Creates a request.
    public init(startDate: EpochMillis, endDate: EpochMillis, onlyFailures: Bool = false, notificationType: String? = nil,
                notificationSubtype: String? = nil, transactionId: String? = nil) {
        self.startDate = startDate
        self.endDate = endDate
        self.onlyFailures = onlyFailures
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        self.transactionId = transactionId
    }

    /// The JSON body (`onlyFailures` only when true).
    public var json: JSONValue {
        var fields: [String: JSONValue] = ["startDate": .int(startDate), "endDate": .int(endDate)]
        if onlyFailures { fields["onlyFailures"] = true }
        if let notificationType { fields["notificationType"] = .string(notificationType) }
        if let notificationSubtype { fields["notificationSubtype"] = .string(notificationSubtype) }
        if let transactionId { fields["transactionId"] = .string(transactionId) }
        return .object(fields)
    }
}
