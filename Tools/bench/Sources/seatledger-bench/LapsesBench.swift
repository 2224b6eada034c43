import AppStoreModels
import Foundation
import JWSVerification
import LedgerEvents
import LedgerStorage
import Projections
import SeatLedger

/// `lapses` (bench step 8c, issue #47): N groups whose periods end within the same minute, and
/// how long `Ledger.deriveAccessChanges` takes to derive every one's lapse once the minute is past.
///
/// A SQLite ledger in a scratch folder gets one `SUBSCRIBED` notification per group (a purchase
/// with `multiSeatInfo`, the shape of `AccessChangeDerivationTests`' many-lapses test): unsigned
/// decoded events appended with the store's append (`Ledger.store`, `package`), then
/// `Ledger.rebuild()` derives their facts and group index (the public path to what an append's
/// projection update writes; untimed). Purchases are a day before now; the i-th group's period
/// ends at `minute + i × 60 s / N`, `minute` being the start of the minute ten minutes from now.
///
/// Then, as `serve`'s follower does (the default limits: 2,000 events and 2,000 due scopes a
/// transaction; an `AccessDeriverCache` of the default capacity, 4,096 scopes), it derives with
/// an injected horizon, calling again until `caughtUp`:
/// 1. through now: the N purchases (`GAINED`), timed as `lapses_initial_derive_seconds`;
/// 2. through the end of the minute + 1 s: every lapse (`LOST`, cause `TIME`), timed from the
///    first call to caught up (`lapses_seconds`; target: all within 60 s).
enum LapsesBench {
    static func run(_ arguments: [String]) throws {
        let options = try Options(arguments, valued: ["--groups", "--dir", "--pki", "--batch"])
        let groups = max(1, try options.int("--groups", default: 100_000))
        let batchSize = max(1, try options.int("--batch", default: 8_192))
        let pki = try options.string("--pki")
        let directory = options.string("--dir", default: NSTemporaryDirectory() + "seatledger-lapses-\(getpid())")
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/lapses.sqlite"

        let anchors = try TrustAnchor.load(contentsOf: URL(fileURLWithPath: pki + "/root.der"))
        let configuration = try LedgerConfiguration(bundleId: "com.example.reps", environment: .sandbox, appAppleId: nil)
        let ledger = try Ledger.create(path: path, configuration: configuration, rootCertificates: anchors)

        let start = Timestamp.millis(Date())
        let minute = (start / 60_000 + 10) * 60_000
        let purchase = start - 86_400_000
        let setupStarted = now()
        var batch: [NewEvent] = []
        batch.reserveCapacity(batchSize)
        var appended = 0
        for index in 0..<groups {
            let expires = minute + EpochMillis(index) * 60_000 / EpochMillis(groups)
            batch.append(event(index: index, purchase: purchase, expires: expires))
            if batch.count == batchSize || index == groups - 1 {
                appended += try ledger.store.commit(events: batch).appended.count
                batch.removeAll(keepingCapacity: true)
            }
        }
        guard appended == groups else { throw BenchError("appended \(appended) of \(groups) purchases") }
        let appendSeconds = now() - setupStarted
        let rebuildStarted = now()
        _ = try ledger.rebuild()
        let rebuildSeconds = now() - rebuildStarted

        let cache = AccessDeriverCache()
        func derive(through horizon: EpochMillis) throws -> (stored: [StoredAccessTransition], runs: Int, replayed: Int) {
            var stored: [StoredAccessTransition] = []
            var runs = 0, replayed = 0
            while true {
                let derivation = try ledger.deriveAccessChanges(through: horizon, cache: cache)
                stored += derivation.stored
                runs += 1
                replayed += derivation.replayedScopes
                if derivation.caughtUp { return (stored, runs, replayed) }
            }
        }
        let initialStarted = now()
        let initial = try derive(through: Timestamp.millis(Date()))
        let initialSeconds = now() - initialStarted
        let gained = initial.stored.filter { $0.kind == "GAINED" }.count
        log("lapses: \(groups) purchases derived in \(String(format: "%.2f", initialSeconds)) s (\(gained) GAINED); deriving the minute's lapses")

        let horizon = minute + 60_000 + 1_000
        let lapseStarted = now()
        let lapse = try derive(through: horizon)
        let lapseSeconds = now() - lapseStarted
        let lost = lapse.stored.filter { $0.kind == "LOST" }
        let byTime = lost.filter { (try? JSONValue.parse($0.body))?["cause"]?["kind"] == .string("TIME") }.count
        let status = try ledger.accessDerivationStatus()
        try emit([
            "lapses_groups": groups,
            "lapses_emitted": lost.count,
            "lapses_emitted_by_time": byTime,
            "lapses_other_transitions": lapse.stored.count - lost.count,
            "lapses_distinct_scopes": Set(lost.map(\.scope)).count,
            "lapses_seconds": round(lapseSeconds, 3),
            "lapses_per_s": round(Double(lost.count) / max(lapseSeconds, 1e-9), 0),
            "lapses_derivations": lapse.runs,
            "lapses_replayed_scopes": lapse.replayed,
            "lapses_initial_derive_seconds": round(initialSeconds, 3),
            "lapses_initial_gained": gained,
            "lapses_initial_derivations": initial.runs,
            "lapses_cursor_horizon_reached": status.cursor.horizon == horizon,
            "lapses_setup_append_seconds": round(appendSeconds, 2),
            "lapses_setup_rebuild_seconds": round(rebuildSeconds, 2),
            "lapses_peak_rss_mb": vmHWMMiB() ?? round(peakRSSMiB(), 1),
        ])
    }

    /// The i-th group's purchase: a `SUBSCRIBED` notification whose transaction (quantity 2,
    /// developer-managed seats) was bought at `purchase` and ends at `expires`, unsigned.
    static func event(index: Int, purchase: EpochMillis, expires: EpochMillis) -> NewEvent {
        let otid = String(3_000_000_000_000_000 + index)
        let uuid = "lapse-\(index)"
        let transaction: JSONValue = .object([
            "transactionId": .string("t\(index)"), "originalTransactionId": .string(otid), "productId": "com.example.reps.team.monthly",
            "bundleId": "com.example.reps", "environment": "Sandbox", "inAppOwnershipType": "PURCHASED", "quantity": 2,
            "purchaseDate": .int(purchase), "expiresDate": .int(expires), "signedDate": .int(purchase),
            "type": "Auto-Renewable Subscription",
            "multiSeatInfo": ["invitationManagement": "DEVELOPER", "priceTiers": [["price": 9990, "quantity": 2]]],
        ])
        let decoded: JSONValue = .object([
            "notification": ["notificationType": "SUBSCRIBED", "notificationUUID": .string(uuid), "signedDate": .int(purchase), "version": "2.0"],
            "transactionInfo": transaction,
        ])
        let event = LedgerEvent(position: Int64(index + 1), eventId: uuid, kind: .notification, type: "SUBSCRIBED", subtype: nil, status: nil,
                                occurredAt: purchase, recordedAt: purchase, source: "bench-lapses", origin: .live, raw: Data(uuid.utf8),
                                decoded: decoded, verification: [], hash: Data())
        return NewEvent(eventId: uuid, kind: .notification, type: "SUBSCRIBED", subtype: nil, status: nil, occurredAt: purchase,
                        raw: Data(uuid.utf8), decoded: decoded,
                        identifiers: EventFacts(event).identifiers.sorted().map { EventIdentifier(.transactionId, $0) },
                        verification: [], source: "bench-lapses:\(index + 1)", origin: .live)
    }

    /// `VmHWM` of `/proc/self/status` in MiB (`nil` where there is none).
    static func vmHWMMiB() -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kb = Double(line.split(separator: " ").dropFirst().first ?? "") else { return nil }
        return round(kb / 1024, 1)
    }
}
