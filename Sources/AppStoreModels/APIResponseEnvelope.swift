/// A recorded App Store Server API response: the `apiResponse` envelope SeatLedger ingests.
///
/// ```json
/// {"apiResponse": {"endpoint": "GetSeatInfo", "method": "GET",
///   "path": "/groups/v1/transactions/2000000000000001/seats", "requestBody": null, "status": 200,
///   "body": {"totalSeatCount": 10, "availableSeatCount": 2, "assignedSeatClaimIds": []},
///   "respondedAt": "2026-11-02T10:00:00.000Z", "environment": "Sandbox", "context": {}}}
/// ```
public struct APIResponseEnvelope: Sendable, Hashable {
    /// The inner object (the value of `apiResponse`), every field kept.
    public let json: JSONValue
    /// `endpoint`: Apple's endpoint name without spaces (open set); becomes the event's `type`.
    public let endpoint: APIEndpoint
    /// `method`: the HTTP method called (`GET`, `POST`, `DELETE`, …); stored, not read.
    public let method: String?
    /// Path and query as called.
    public let path: String?
    /// `requestBody`: the JSON request body sent; `nil` when absent or `null`.
    public let requestBody: JSONValue?
    /// HTTP status.
    public let status: Int64
    /// `body`: the JSON response body received; `nil` when absent or `null`.
    public let body: JSONValue?
    /// `respondedAt`: when the response arrived, by the caller's clock; the event's `occurredAt`.
    public let respondedAt: EpochMillis
    /// `environment`: the App Store environment called, if recorded; must equal the ledger's.
    public let environment: AppStoreEnvironment?
    /// `context`: the recorder's own notes (`context.memberRef` is indexed); `nil` when absent or `null`.
    public let context: JSONValue?

    /// Why an `apiResponse` envelope was refused.
    public struct Invalid: Error, Sendable, CustomStringConvertible {
        /// Which field is wrong and how.
        public let reason: String
        /// The reason, prefixed with `invalid apiResponse envelope:`.
        public var description: String { "invalid apiResponse envelope: \(reason)" }
    }

    /// Reads the inner envelope object; `endpoint`, `status` and `respondedAt` are required.
    public init(json: JSONValue) throws(Invalid) {
        guard json.objectValue != nil else { throw Invalid(reason: "apiResponse is not an object") }
        guard let endpoint = json["endpoint"]?.stringValue, !endpoint.isEmpty else {
            throw Invalid(reason: "missing endpoint")
        }
        guard let status = json["status"]?.int64Value else { throw Invalid(reason: "missing or non-numeric status") }
        guard let responded = Timestamp.parse(json["respondedAt"]) else {
            throw Invalid(reason: "missing or unparseable respondedAt (ISO 8601 or epoch milliseconds)")
        }
        self.json = json
        self.endpoint = APIEndpoint(rawValue: endpoint)
        self.method = json["method"]?.stringValue
        self.path = json["path"]?.stringValue
        self.requestBody = json["requestBody"].flatMap { $0.isNull ? nil : $0 }
        self.status = status
        self.body = json["body"].flatMap { $0.isNull ? nil : $0 }
        self.respondedAt = responded
        self.environment = json["environment"]?.stringValue.map(AppStoreEnvironment.init(rawValue:))
        self.context = json["context"].flatMap { $0.isNull ? nil : $0 }
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// `errorCode` of an error body, if any.
    public var errorCode: Int64? { body?["errorCode"]?.int64Value }

    /// `errorMessage` of an error body, if any.
    public var errorMessage: String? { body?["errorMessage"]?.stringValue }

    /// Path segments (query removed), for reading identifiers out of the path.
    public var pathSegments: [String] { path.map(Self.segments(ofPath:)) ?? [] }

    /// The non-empty `/`-separated segments of `path` before any `?` (split as UTF-8 bytes:
    /// `String.split` cost two thirds of reading an envelope's identifiers).
    public static func segments(ofPath path: String) -> [String] {
        var path = path
        return path.withUTF8 { bytes in
            var segments: [String] = []
            var start = 0
            for index in 0...bytes.count {
                let end = index == bytes.count || bytes[index] == UInt8(ascii: "?")
                guard end || bytes[index] == UInt8(ascii: "/") else { continue }
                if index > start { segments.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)) }
                if end { break }
                start = index + 1
            }
            return segments
        }
    }

    /// The purchaser's original transaction id in a seat endpoint path (`/groups/v1/transactions/{id}/seats…`).
    public var seatPathTransactionId: String? { Self.seatPathTransactionId(in: pathSegments) }

    /// ``seatPathTransactionId`` of path segments already split.
    public static func seatPathTransactionId(in segments: [String]) -> String? {
        guard let index = segments.firstIndex(of: "transactions"), index + 2 < segments.count,
              segments[index + 2] == "seats", segments.contains("groups") else { return nil }
        return segments[index + 1]
    }

    /// The seat claim id in an Unclaim/Associate path (`…/seats/{seatClaimId}[/associate]`).
    public var seatPathClaimId: String? { Self.seatPathClaimId(in: pathSegments) }

    /// ``seatPathClaimId`` of path segments already split.
    public static func seatPathClaimId(in segments: [String]) -> String? {
        guard let index = segments.firstIndex(of: "seats"), index + 1 < segments.count else { return nil }
        return segments[index + 1]
    }

    /// The last path segment after `marker` (e.g. `currentGroups`, `group`, `subscriptions`).
    public func pathSegment(after marker: String) -> String? { Self.segment(after: marker, in: pathSegments) }

    /// ``pathSegment(after:)`` of path segments already split.
    public static func segment(after marker: String, in segments: [String]) -> String? {
        guard let index = segments.lastIndex(of: marker), index + 1 < segments.count else { return nil }
        return segments[index + 1]
    }
}
