import AppStoreModels
import Foundation

/// Which events a fault drill hits: a rate, or explicit event indexes / notification UUIDs.
public enum DrillSelection: Sendable, Hashable {
    case none
    /// Each notification independently with this probability (deterministic from the seed).
    case rate(Double)
    /// Event indexes (positions in the undrilled stream) and/or notificationUUIDs.
    case targets(indexes: Set<Int>, eventIds: Set<String>)

    /// Parses `0.1` / `1.0` (a rate: must contain a decimal point) or `3,7,<uuid>` (a list).
    public static func parse(_ text: String) throws(SimulatorError) -> DrillSelection {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.contains("."), !trimmed.contains("-"), !trimmed.contains(",") {
            guard let rate = Double(trimmed), rate >= 0, rate <= 1 else {
                throw SimulatorError("bad rate '\(text)': expected a number from 0.0 to 1.0")
            }
            return .rate(rate)
        }
        var indexes: Set<Int> = []
        var ids: Set<String> = []
        for part in trimmed.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !part.isEmpty {
            if let n = Int(part) {
                guard n >= 0 else { throw SimulatorError("bad event index '\(part)'") }
                indexes.insert(n)
            } else if part.count == 36, part.filter({ $0 == "-" }).count == 4 {
                ids.insert(part.lowercased())
            } else {
                throw SimulatorError("bad drill target '\(part)': expected an event index (see --list-events), a notificationUUID, or a rate like 0.1")
            }
        }
        guard !indexes.isEmpty || !ids.isEmpty else { throw SimulatorError("empty drill list '\(text)'") }
        return .targets(indexes: indexes, eventIds: ids)
    }
}

/// Fault drills applied to the notification stream (API responses are never touched).
public struct FaultDrills: Sendable, Hashable {
    /// Missed notifications: left out of the stream (and carried by the `--history-out` backfill).
    public var drop: DrillSelection = .none
    /// Retried notifications: the byte-identical line again, right after the original.
    public var duplicate: DrillSelection = .none
    /// Late notifications: moved to the end of the stream (signedDate unchanged).
    public var delay: DrillSelection = .none
    /// Out-of-order notifications: swapped with the line that follows.
    public var reorder: DrillSelection = .none

    public init() {}

    public var isEmpty: Bool { drop == .none && duplicate == .none && delay == .none && reorder == .none }
}

/// The output order of one group's events after fault drills.
struct DrillOutcome: Sendable {
    /// Event indexes in output order; a duplicated event appears twice.
    var order: [Int]
    /// Dropped event indexes, in stream order.
    var dropped: [Int]
    /// Event ids named by a drill list that this group matched.
    var matchedIds: Set<String>
}

extension FaultDrills {
    func apply(to events: [PlannedEvent], seed: UInt64, groupIndex: Int) throws(SimulatorError) -> DrillOutcome {
        var matched: Set<String> = []
        func select(_ selection: DrillSelection, stream: UInt64, name: String) throws(SimulatorError) -> Set<Int> {
            switch selection {
            case .none:
                return []
            case .rate(let rate):
                var random = SeededRandom(seed: seed, stream: stream, index: UInt64(groupIndex))
                var chosen: Set<Int> = []
                for event in events {
                    let draw = random.nextUnit()
                    if event.kind == .notification, draw < rate { chosen.insert(event.index) }
                }
                return chosen
            case .targets(let indexes, let ids):
                var chosen: Set<Int> = []
                for index in indexes.sorted() {
                    guard index < events.count else {
                        throw SimulatorError("--\(name): event index \(index) is out of range (this stream has \(events.count) events, 0…\(events.count - 1))")
                    }
                    guard events[index].kind == .notification else {
                        throw SimulatorError("--\(name): event \(index) is an API response (\(events[index].label)); fault drills apply to notifications only")
                    }
                    chosen.insert(index)
                }
                for event in events where event.kind == .notification && ids.contains(event.eventId) {
                    chosen.insert(event.index)
                    matched.insert(event.eventId)
                }
                return chosen
            }
        }
        let dropped = try select(drop, stream: 11, name: "drop")
        let delayed = try select(delay, stream: 12, name: "delay").subtracting(dropped)
        let reordered = try select(reorder, stream: 13, name: "reorder").subtracting(dropped)
        let duplicated = try select(duplicate, stream: 14, name: "duplicate").subtracting(dropped)
        var order = events.map(\.index).filter { !dropped.contains($0) && !delayed.contains($0) }
        order += delayed.sorted()
        var i = 0
        while i + 1 < order.count {
            if reordered.contains(order[i]) {
                order.swapAt(i, i + 1)
                i += 2
            } else {
                i += 1
            }
        }
        order = order.flatMap { duplicated.contains($0) ? [$0, $0] : [$0] }
        return DrillOutcome(order: order, dropped: dropped.sorted(), matchedIds: matched)
    }
}

/// Builds Get Notification History `apiResponse` lines (≤ 20 items a page) carrying dropped notifications.
///
/// Streams: a page is written as soon as the next one is known to exist.
final class HistoryPager {
    static let pageSize = 20

    private let startDate: EpochMillis
    private let queryTime: EpochMillis
    private let accelerated: Bool
    private var random: SeededRandom
    private var pending: [(payload: String, signedDate: EpochMillis)] = []
    private var pageCount = 0
    private var previousToken: String?
    private let write: (String) throws -> Void

    init(startDate: EpochMillis, queryTime: EpochMillis, seed: UInt64, accelerated: Bool, write: @escaping (String) throws -> Void) {
        self.startDate = startDate
        self.queryTime = queryTime
        self.accelerated = accelerated
        self.random = SeededRandom(seed: seed, stream: 21)
        self.write = write
    }

    /// Adds one dropped notification (its JWS and signedDate).
    func add(signedPayload: String, signedDate: EpochMillis) throws {
        pending.append((signedPayload, signedDate))
        if pending.count > Self.pageSize {
            try flush(Array(pending.prefix(Self.pageSize)), hasMore: true)
            pending.removeFirst(Self.pageSize)
        }
    }

    /// Writes the last page (an empty page when nothing was dropped).
    func finish() throws {
        try flush(pending, hasMore: false)
        pending = []
    }

    private func flush(_ items: [(payload: String, signedDate: EpochMillis)], hasMore: Bool) throws {
        let respondedAt = queryTime + 1000 * Int64(pageCount + 1)
        let retryOffsets: [Int64] = [0, 3_600_000, 43_200_000, 86_400_000, 172_800_000, 259_200_000]
        let history: [JSONValue] = items.map { item in
            let attempts = retryOffsets.map { item.signedDate + ScenarioEngine.scale($0, accelerated) }.filter { $0 < respondedAt }
            return .object([
                "signedPayload": .string(item.payload),
                "sendAttempts": .array(attempts.map { ["attemptDate": .int($0), "sendAttemptResult": "TIMED_OUT"] }),
            ])
        }
        var body: [String: JSONValue] = ["notificationHistory": .array(history), "hasMore": .bool(hasMore)]
        let token = hasMore ? random.uuid() : nil
        if let token { body["paginationToken"] = .string(token) }
        var path = "/inApps/v1/notifications/history"
        if let previousToken { path += "?paginationToken=\(previousToken)" }
        let inner: JSONValue = .object([
            "endpoint": "GetNotificationHistory",
            "method": "POST",
            "path": .string(path),
            "requestBody": ["startDate": .int(startDate), "endDate": .int(queryTime), "onlyFailures": true],
            "status": 200,
            "body": .object(body),
            "respondedAt": .string(Timestamp.iso8601(respondedAt)),
            "environment": .string(SimulatedApp.environment),
            "context": .object([:]),
        ])
        try write(JSONValue.object(["apiResponse": inner]).canonicalString())
        previousToken = token
        pageCount += 1
    }
}
