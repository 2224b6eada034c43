import AppStoreAPI
import AppStoreModels
import Foundation
import LedgerEvents
import LedgerIntake
import LedgerStorage
import SeatLedger

/// How far notification-history backfill got, kept in the ledger's config (`backfill_cursor`).
///
/// `covered` holds merged half-open windows `[start, end)` already fetched to the last page,
/// separately for all notifications and for `onlyFailures` runs (a full run also covers the
/// failures). `inProgress` is the window being paged, with the token of the next page, so an
/// interrupted run resumes where it stopped.
public struct BackfillCursor: Sendable, Equatable {
    /// A window being paged.
    public struct InProgress: Sendable, Equatable {
        /// Window start (inclusive, epoch ms).
        public var startDate: EpochMillis
        /// Window end (exclusive, epoch ms).
        public var endDate: EpochMillis
        /// Whether it is an `onlyFailures` window.
        public var onlyFailures: Bool
        /// The token of the next page (`nil`: the first).
        public var paginationToken: String?
        /// Pages fetched so far.
        public var pages: Int

        /// Creates a progress record.
        public init(startDate: EpochMillis, endDate: EpochMillis, onlyFailures: Bool, paginationToken: String?, pages: Int) {
            self.startDate = startDate
            self.endDate = endDate
            self.onlyFailures = onlyFailures
            self.paginationToken = paginationToken
            self.pages = pages
        }
    }

    /// Fully fetched windows of all notifications.
    public var coveredAll: [ClosedWindow] = []
    /// Fully fetched windows of failures only.
    public var coveredFailures: [ClosedWindow] = []
    /// The window being paged, if a run stopped midway.
    public var inProgress: InProgress?

    /// An empty cursor.
    public init() {}

    /// A `[start, end)` window in epoch ms.
    public struct ClosedWindow: Sendable, Equatable {
        /// Inclusive start.
        public var start: EpochMillis
        /// Exclusive end.
        public var end: EpochMillis
        /// Creates a window.
        public init(start: EpochMillis, end: EpochMillis) {
            self.start = start
            self.end = end
        }
    }

    /// `windows` sorted with overlapping or touching ones merged.
    public static func merge(_ windows: [ClosedWindow]) -> [ClosedWindow] {
        var result: [ClosedWindow] = []
        for window in windows.filter({ $0.start < $0.end }).sorted(by: { $0.start < $1.start }) {
            if let last = result.last, window.start <= last.end {
                result[result.count - 1].end = max(last.end, window.end)
            } else {
                result.append(window)
            }
        }
        return result
    }

    /// The parts of `[start, end)` not inside `covered` (merged), in order.
    public static func gaps(start: EpochMillis, end: EpochMillis, covered: [ClosedWindow]) -> [ClosedWindow] {
        var gaps: [ClosedWindow] = []
        var cursor = start
        for window in merge(covered) where window.end > cursor && window.start < end {
            if window.start > cursor { gaps.append(ClosedWindow(start: cursor, end: min(window.start, end))) }
            cursor = max(cursor, window.end)
            if cursor >= end { break }
        }
        if cursor < end { gaps.append(ClosedWindow(start: cursor, end: end)) }
        return gaps
    }

    /// Windows a run with `onlyFailures` does not need to fetch again.
    public func covered(onlyFailures: Bool) -> [ClosedWindow] {
        onlyFailures ? Self.merge(coveredAll + coveredFailures) : coveredAll
    }

    /// The JSON stored in the config table.
    public var json: JSONValue {
        func windows(_ list: [ClosedWindow]) -> JSONValue {
            .array(list.map { ["start": .int($0.start), "end": .int($0.end), "startISO": .timestamp($0.start), "endISO": .timestamp($0.end)] })
        }
        return [
            "version": 1, "coveredAll": windows(coveredAll), "coveredFailures": windows(coveredFailures),
            "inProgress": inProgress.map {
                ["startDate": .int($0.startDate), "endDate": .int($0.endDate), "onlyFailures": .bool($0.onlyFailures),
                 "paginationToken": .optional($0.paginationToken), "pages": .count($0.pages)]
            } ?? .null,
        ]
    }

    /// Reads the stored JSON; anything unreadable gives an empty cursor.
    public init(json: JSONValue?) {
        guard let json else { return }
        func windows(_ value: JSONValue?) -> [ClosedWindow] {
            (value?.arrayValue ?? []).compactMap { item in
                guard let start = item["start"]?.int64Value, let end = item["end"]?.int64Value else { return nil }
                return ClosedWindow(start: start, end: end)
            }
        }
        coveredAll = Self.merge(windows(json["coveredAll"]))
        coveredFailures = Self.merge(windows(json["coveredFailures"]))
        if let p = json["inProgress"], let start = p["startDate"]?.int64Value, let end = p["endDate"]?.int64Value {
            inProgress = InProgress(startDate: start, endDate: end, onlyFailures: p["onlyFailures"]?.boolValue ?? false,
                                    paginationToken: p["paginationToken"]?.stringValue, pages: Int(p["pages"]?.int64Value ?? 0))
        }
    }
}

/// A notification the backfill appended (one the ledger had missed).
public struct BackfilledNotification: Sendable, Equatable {
    /// Its id.
    public let notificationUUID: String
    /// `notificationType`.
    public let type: String?
    /// `subtype`.
    public let subtype: String?
    /// Apple's `signedDate`.
    public let signedDate: EpochMillis
    /// Where it was appended.
    public let position: Int64

    /// JSON form.
    public var json: JSONValue {
        ["notificationUUID": .string(notificationUUID), "notificationType": .optional(type), "subtype": .optional(subtype),
         "signedDate": .timestamp(signedDate), "position": .int(position)]
    }
}

/// What a backfill run did.
public struct BackfillReport: Sendable {
    /// The requested window after clamping to Apple's history window.
    public var since: EpochMillis
    /// The requested end.
    public var until: EpochMillis
    /// Whether only failed deliveries were asked for.
    public var onlyFailures: Bool
    /// Windows fetched in this run.
    public var windows: [BackfillCursor.ClosedWindow] = []
    /// Whether the run resumed an interrupted window.
    public var resumed = false
    /// Get Notification History pages answered 2xx.
    public var pages = 0
    /// Notifications Apple returned.
    public var returned = 0
    /// Notifications that were new to the ledger (missed).
    public var newNotifications: [BackfilledNotification] = []
    /// Notifications already in the ledger.
    public var alreadyKnown = 0
    /// Notifications in pages that were quarantined (kept, not appended).
    public var quarantined = 0
    /// Quarantine reasons of refused pages.
    public var quarantineReasons: [String] = []
    /// Every call made.
    public var calls: [APICallResult] = []
    /// Whether the whole window is now covered.
    public var complete = false
    /// Why the run stopped early.
    public var failure: String?
    /// Whether ``NotificationBackfill/shouldStop`` ended the run before its last page.
    public var interrupted = false
    /// Notes for the user (clamped window, nothing to do).
    public var notes: [String] = []

    /// JSON for `--json`.
    public var json: JSONValue {
        [
            "since": .timestamp(since), "until": .timestamp(until), "onlyFailures": .bool(onlyFailures),
            "windows": .array(windows.map { ["start": .timestamp($0.start), "end": .timestamp($0.end)] }),
            "resumed": .bool(resumed), "pages": .count(pages), "returned": .count(returned),
            "new": .count(newNotifications.count), "alreadyKnown": .count(alreadyKnown), "quarantined": .count(quarantined),
            "newNotifications": .array(newNotifications.map(\.json)), "complete": .bool(complete),
            "failure": .optional(failure), "interrupted": .bool(interrupted), "notes": .array(notes.map(JSONValue.string)),
            "calls": .array(calls.map(\.json)),
        ]
    }
}

/// Recovers missed notifications with Get Notification History: idempotent and resumable.
///
/// Pages are recorded as `apiResponse` events (origin `backfill`) whose history items are
/// verified and appended as notifications; ones already in the ledger (same `notificationUUID`)
/// append nothing. The cursor (``BackfillCursor``) is saved after every page, so a rerun of the
/// same window makes no request at all, and an interrupted run continues from the next page.
///
/// Not `Sendable` (it uses a `Ledger`, one thread at a time), and every call blocks its thread
/// for the API calls it makes, retries and `Retry-After` waits included: run it off Swift's
/// cooperative pool (`serve` runs it inside `LedgerPool.write`).
public struct NotificationBackfill {
    /// The connection.
    public let api: LedgerAPI
    /// Upper bound on pages in one run (a safety net against a looping server).
    public var maximumPages = 100_000
    /// How many times one window may be re-clamped after Apple refuses its start date.
    public var maximumReclamps = 3
    /// The wall clock, used only to measure how long the run has taken when Apple refuses a
    /// start date (the window limits themselves come from `now`).
    public var wallClock: () -> EpochMillis = { Timestamp.millis(Date()) }
    /// Asked before each page request (a signal, say): `true` ends the run there, its progress
    /// saved like after any page (``BackfillReport/interrupted``), so the next run resumes.
    public var shouldStop: () -> Bool = { false }

    /// Creates a backfill over `api`.
    public init(api: LedgerAPI) { self.api = api }

    /// The stored cursor.
    public static func cursor(of ledger: Ledger) throws -> BackfillCursor {
        let text = try ledger.setting(LedgerAPISettings.backfillCursor)
        return BackfillCursor(json: text.flatMap { try? JSONValue.parse($0) })
    }

    private func save(_ cursor: BackfillCursor) throws {
        try api.ledger.storeSetting(LedgerAPISettings.backfillCursor, cursor.json.canonicalString())
    }

    /// Fetches `[since, until)` (minus what earlier runs covered) and ingests every page.
    ///
    /// - Parameters:
    ///   - until: default `now`; clamped to `now`.
    ///   - restart: ignore the cursor and fetch the whole window again (notifications still dedupe).
    ///   - now: the current time (`$SEATLEDGER_NOW` in the CLI), for the window limits.
    ///
    /// An interrupted window whose start has since aged past Apple's history limit is not resumed
    /// with its saved token (Apple would refuse its start date): its token and progress are dropped
    /// and the part Apple still keeps is fetched from its first page. A `400` start-date error
    /// (``AppleAPIError/startDate``, e.g. Apple's clock ahead of ours, or a long run) moves the
    /// window start forward and fetches it from its first page, at most ``maximumReclamps`` times.
    public func run(since requestedSince: EpochMillis, until requestedUntil: EpochMillis?, onlyFailures: Bool,
                    restart: Bool = false, now: EpochMillis) throws -> BackfillReport {
        let environment = api.ledger.configuration.environment
        let days = AppStoreAPIPaths.notificationHistoryDays(for: environment)
        let historyLength = days * 86_400_000
        let oldest = now - historyLength + 60_000
        let startedAt = wallClock()
        let until = min(requestedUntil ?? now, now)
        var since = requestedSince
        var report = BackfillReport(since: since, until: until, onlyFailures: onlyFailures)
        if since < oldest {
            since = oldest
            report.since = since
            report.notes.append("Apple keeps \(days) days of notification history in \(environment.rawValue); "
                + "starting at \(Timestamp.iso8601(since)) instead of \(Timestamp.iso8601(requestedSince))")
        }
        guard since < until else {
            throw APIUsageError("--since (\(Timestamp.iso8601(since))) must be before --until (\(Timestamp.iso8601(until)))")
        }
        var cursor = try Self.cursor(of: api.ledger)

        var queue: [(BackfillCursor.ClosedWindow, String?, Int)] = []
        if let progress = cursor.inProgress, !restart, progress.onlyFailures == onlyFailures,
           progress.startDate < until, progress.endDate > since, progress.endDate > oldest {
            if progress.startDate < oldest {
                // Apple refuses a start date older than its history (and the saved token belongs to
                // the old start): fetch what Apple still keeps of the window from its first page.
                queue.append((BackfillCursor.ClosedWindow(start: oldest, end: progress.endDate), nil, 0))
                report.notes.append("the interrupted window started at \(Timestamp.iso8601(progress.startDate)), now older than Apple's "
                    + "\(days)-day history; dropped its saved pagination token (after \(progress.pages) page\(progress.pages == 1 ? "" : "s")) "
                    + "and fetching \(Timestamp.iso8601(oldest)) to \(Timestamp.iso8601(progress.endDate)) from its first page")
            } else {
                queue.append((BackfillCursor.ClosedWindow(start: progress.startDate, end: progress.endDate), progress.paginationToken,
                              progress.pages))
            }
            report.resumed = true
        } else {
            cursor.inProgress = nil
        }
        var pending = restart ? [] : cursor.covered(onlyFailures: onlyFailures)
        if let first = queue.first { pending.append(first.0) }
        queue += BackfillCursor.gaps(start: since, end: until, covered: pending).map { ($0, nil, 0) }
        if queue.isEmpty {
            report.complete = true
            report.notes.append("already backfilled: \(Timestamp.iso8601(since)) to \(Timestamp.iso8601(until)) was fetched "
                + "by an earlier run; nothing requested (use --restart to fetch it again)")
            return report
        }

        var pageCount = 0
        windows: for (queuedWindow, startToken, startPages) in queue {
            var window = queuedWindow
            report.windows.append(window)
            var token = startToken
            var pages = startPages
            var restartedWindow = false
            var reclamps = 0
            while true {
                if shouldStop() {
                    // Between pages: what was fetched is recorded; keep the place like a failed call does.
                    report.interrupted = true
                    cursor.inProgress = BackfillCursor.InProgress(startDate: window.start, endDate: window.end, onlyFailures: onlyFailures,
                                                                  paginationToken: token, pages: pages)
                    try save(cursor)
                    return report
                }
                pageCount += 1
                guard pageCount <= maximumPages else {
                    report.failure = "stopped after \(maximumPages) pages (safety limit)"
                    return report
                }
                let request = NotificationHistoryRequest(startDate: window.start, endDate: window.end, onlyFailures: onlyFailures)
                let (result, recorded) = try api.perform(.getNotificationHistory(request, paginationToken: token))
                report.calls.append(result)
                guard result.isSuccess, let body = result.body else {
                    if result.isAppleError(.startDate), reclamps < maximumReclamps {
                        // Apple's history limit is past the window start (its clock runs ahead of
                        // ours, or the run took long): move the start forward by a growing margin.
                        reclamps += 1
                        let margin = 60_000 * Int64(1 << (2 * reclamps))   // 4, 16, 64 minutes
                        let elapsed = max(0, wallClock() - startedAt)
                        let newStart = now + elapsed - historyLength + margin
                        if newStart > window.start {
                            let refused = window.start
                            report.notes.append("Apple refused the start date \(Timestamp.iso8601(refused)) (\(result.summary)); "
                                + "re-clamped the window to start at \(Timestamp.iso8601(min(newStart, window.end))) and fetching it from its first page "
                                + "(Apple's clock may be ahead of ours); \(Timestamp.iso8601(refused)) to "
                                + "\(Timestamp.iso8601(min(newStart, window.end))) is not fetched")
                            if report.since == refused { report.since = min(newStart, until) }
                            guard newStart < window.end else {
                                // Nothing of this window is still in Apple's history.
                                report.windows.removeLast()
                                if let progress = cursor.inProgress, progress.onlyFailures == onlyFailures, progress.endDate == window.end {
                                    cursor.inProgress = nil
                                    try save(cursor)
                                }
                                continue windows
                            }
                            window.start = newStart
                            report.windows[report.windows.count - 1] = window
                            token = nil
                            pages = 0
                            continue
                        }
                    }
                    if token != nil, !restartedWindow, !result.isAppleError(.startDate), let status = result.status, (400..<500).contains(status),
                       status != 401, status != 429 {
                        // A stale or foreign pagination token: fetch the window from its first page.
                        restartedWindow = true
                        token = nil
                        pages = 0
                        report.notes.append("Apple refused the saved pagination token (\(result.summary)); restarting the window")
                        continue
                    }
                    report.failure = result.summary
                    cursor.inProgress = BackfillCursor.InProgress(startDate: window.start, endDate: window.end, onlyFailures: onlyFailures,
                                                                  paginationToken: token, pages: pages)
                    try save(cursor)
                    return report
                }
                // A 2xx that is not a history page (a proxy's HTML, a body without the list or
                // `hasMore`), or one that says there is more without a new token, must not mark the
                // window fetched: that would leave its other pages unfetched for good. Stop here
                // with the place kept, as after a failed call; a rerun asks for this page again.
                let next = body["paginationToken"]?.stringValue
                let shapeProblem: String? = {
                    guard body["notificationHistory"]?.arrayValue != nil, let hasMore = body["hasMore"]?.boolValue else {
                        return "a 2xx answer that is not a Get Notification History page (no notificationHistory list or hasMore)"
                    }
                    guard hasMore else { return nil }
                    guard let next, !next.isEmpty else { return "hasMore is true but no paginationToken came with it" }
                    return next == token ? "hasMore is true but the paginationToken is the one just sent" : nil
                }()
                if let shapeProblem {
                    report.failure = "page \(pages + 1) of the window from \(Timestamp.iso8601(window.start)): \(shapeProblem); "
                        + "the window is not marked fetched (rerun to ask for this page again)"
                    cursor.inProgress = BackfillCursor.InProgress(startDate: window.start, endDate: window.end, onlyFailures: onlyFailures,
                                                                  paginationToken: token, pages: pages)
                    try save(cursor)
                    return report
                }
                pages += 1
                report.pages += 1
                let items = body["notificationHistory"]?.arrayValue ?? []
                report.returned += items.count
                if let final = recorded.last {
                    switch final.outcome {
                    case .appended(let positions, _):
                        let fresh = try api.ledger.events(at: positions).filter { $0.kind == .notification }
                        report.newNotifications += fresh.map {
                            BackfilledNotification(notificationUUID: $0.eventId, type: $0.type, subtype: $0.subtype,
                                                   signedDate: $0.occurredAt, position: $0.position)
                        }
                        report.alreadyKnown += items.count - fresh.count
                    case .duplicate:
                        report.alreadyKnown += items.count
                    case .quarantined(let id, let rejection):
                        // The page is kept in quarantine as it came; its notifications are then
                        // ingested one by one, so one bad item does not hold the good ones back.
                        report.quarantineReasons.append("page quarantined as #\(id): \(rejection.reason); its notifications were ingested one by one")
                        try ingestItems(of: items, pageSource: final.exchange.endpoint.rawValue + " page \(pages)", into: &report)
                    }
                }
                if body["hasMore"]?.boolValue == true, let next {
                    token = next
                    cursor.inProgress = BackfillCursor.InProgress(startDate: window.start, endDate: window.end, onlyFailures: onlyFailures,
                                                                  paginationToken: token, pages: pages)
                    try save(cursor)
                    continue
                }
                cursor.inProgress = nil
                if onlyFailures {
                    cursor.coveredFailures = BackfillCursor.merge(cursor.coveredFailures + [window])
                } else {
                    cursor.coveredAll = BackfillCursor.merge(cursor.coveredAll + [window])
                }
                try save(cursor)
                break
            }
        }
        report.complete = true
        return report
    }

    /// Ingests each `signedPayload` of a quarantined page's `notificationHistory` as a
    /// notification of its own (origin `backfill`, the same bytes the page's events would carry),
    /// counting what was new, already known and refused.
    private func ingestItems(of items: [JSONValue], pageSource: String, into report: inout BackfillReport) throws {
        var messages: [InboundMessage] = []
        for (index, item) in items.enumerated() {
            // An item without a notification carries nothing to append (as on an appended page,
            // where the envelope skips it): counted as known, not as refused without a record.
            guard let jws = item["signedPayload"]?.stringValue else { report.alreadyKnown += 1; continue }
            messages.append(InboundMessage(raw: Data(JSONValue.object(["signedPayload": .string(jws)]).canonicalData()),
                                           source: "\(pageSource)#notificationHistory[\(index)]", origin: .backfill))
        }
        guard !messages.isEmpty else { return }
        let (_, outcomes) = try api.ledger.ingestBatch(messages)
        for (message, outcome) in zip(messages, outcomes) {
            switch outcome {
            case .appended(let positions, _):
                report.newNotifications += try api.ledger.events(at: positions).filter { $0.kind == .notification }.map {
                    BackfilledNotification(notificationUUID: $0.eventId, type: $0.type, subtype: $0.subtype,
                                           signedDate: $0.occurredAt, position: $0.position)
                }
            case .duplicate:
                report.alreadyKnown += 1
            case .quarantined(let id, let rejection):
                report.quarantined += 1
                report.quarantineReasons.append("\(message.source) quarantined as #\(id): \(rejection.reason)")
            }
        }
    }
}
