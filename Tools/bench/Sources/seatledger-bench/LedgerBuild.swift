import AppStoreModels
import CSQLite
import Dispatch
import EventStore
import Foundation
import GroupSimulator
import JWSVerification
import LedgerEvents
import LedgerIntake
import LedgerStorage
import SeatLedger

/// `build-ledger`: the rebuild benchmark's ledger, made with the library rather than the CLI.
///
/// The simulator streams N groups of a scenario (signed on all cores); each batch of lines is
/// verified and decoded by the ledger's own `MessageDecoder` (all cores) and appended with
/// `commit(events:)` in one transaction, WITHOUT projection maintenance (the append alone, no
/// projection update after it): no facts, no group index, no snapshots. `seatledger rebuild` then has to derive
/// everything from the log.
enum LedgerBuild {
    static func run(_ arguments: [String]) throws {
        let options = try Options(arguments, valued: ["--db", "--pki", "--scenario", "--groups", "--seed", "--batch", "--bundle-id"],
                                  boolean: ["--shared-member-refs"])
        let path = try options.string("--db")
        let pki = try options.string("--pki")
        let scenarioPath = try options.string("--scenario")
        let groups = try options.int("--groups", default: 100_000)
        let seed = try options.int("--seed", default: 2)
        let batchSize = try options.int("--batch", default: 8192)
        let bundleId = options.string("--bundle-id", default: "com.example.reps")
        let uniqueMemberRefs = !options.flag("--shared-member-refs")
        for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }

        let started = now()
        let anchors = try TrustAnchor.load(contentsOf: URL(fileURLWithPath: pki + "/root.der"))
        let configuration = try LedgerConfiguration(bundleId: bundleId, environment: .sandbox, appAppleId: nil)
        let ledger = try Ledger.create(path: path, configuration: configuration, rootCertificates: anchors)
        let scenario = try Scenario.parse(Data(contentsOf: URL(fileURLWithPath: scenarioPath)))
        let simulator = try GroupSimulator(pkiDirectory: URL(fileURLWithPath: pki))

        // Pipelined: batch k+1 is verified on all cores while batch k is committed by the single writer.
        var pending: [InboundMessage] = []
        pending.reserveCapacity(batchSize)
        var lines = 0, appended = 0, committedLines = 0, lastReport = started
        var commitSeconds = 0.0, waitSeconds = 0.0
        var inFlight: (group: DispatchGroup, slot: DecodeSlot, count: Int)?
        let decoder = ledger.decoder
        func commitInFlight() throws {
            guard let (group, slot, count) = inFlight else { return }
            let t0 = now()
            group.wait()
            let t1 = now()
            waitSeconds += t1 - t0
            var events: [NewEvent] = []
            events.reserveCapacity(count)
            for (index, result) in (slot.value ?? []).enumerated() {
                switch result {
                case .success(let produced): events.append(contentsOf: produced)
                case .failure(let rejection):
                    throw BenchError("the ledger refused generated line \(committedLines + index + 1): \(rejection.code): \(rejection.reason)")
                }
            }
            let result = try ledger.store.commit(events: events)
            commitSeconds += now() - t1
            appended += result.appended.count
            committedLines += count
            inFlight = nil
            if now() - lastReport > 15 {
                lastReport = now()
                log(String(format: "build-ledger: %d events appended (%.0f s)", appended, lastReport - started))
            }
        }
        func flush() throws {
            guard !pending.isEmpty else { return }
            let batch = pending
            pending.removeAll(keepingCapacity: true)
            let slot = DecodeSlot()
            let group = DispatchGroup()
            DispatchQueue.global().async(group: group) { slot.value = parallelDecode(decoder, batch) }
            try commitInFlight()
            inFlight = (group, slot, batch.count)
        }
        var simulation = SimulationOptions(seed: UInt64(seed))
        simulation.bundleId = bundleId
        // Ledgers of other apps (one serve of several ledgers) get member refs of their own too.
        let refSuffix = bundleId == SimulationOptions().bundleId ? "" : "-s\(seed)"
        // The simulator names members as the scenario does, so in load mode every group's claims
        // carry the same memberRef ("ann", "bob", …): one identifier tying all groups together,
        // which no real ledger has (a memberRef is one of your users). API responses are not
        // signed, so each group's memberRefs get its index as a suffix ("ann-g42").
        let eventsPerGroup = try SimulationPlan(scenario, options: simulation, groupIndex: 0).events.count
        _ = try simulator.stream(scenario, options: simulation, groups: groups, line: { line in
            lines += 1
            let text = uniqueMemberRefs ? Self.suffixMemberRef(line, group: (lines - 1) / eventsPerGroup, prefix: refSuffix) : line
            pending.append(InboundMessage(raw: Data(text.utf8), source: "bench-load:\(lines)", origin: .file, acceptsAPIResponses: true))
            if pending.count >= batchSize { try flush() }
        })
        try flush()
        try commitInFlight()
        // Everything into the main file (the harness moves it into the cache alone).
        try checkpoint(path)
        let seconds = now() - started
        try emit([
            "build_events": appended,
            "build_lines": lines,
            "build_groups": groups,
            "build_seconds": round(seconds, 1),
            "build_commit_seconds": round(commitSeconds, 1),
            "build_wait_for_verify_seconds": round(waitSeconds, 1),
        ])
    }
}

extension LedgerBuild {
    /// `PRAGMA wal_checkpoint(TRUNCATE)` through a second connection.
    static func checkpoint(_ path: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let db else { throw BenchError("cannot open \(path)") }
        defer { sqlite3_close_v2(db) }
        sqlite3_busy_timeout(db, 30_000)
        guard sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nil, nil, nil) == SQLITE_OK else {
            throw BenchError("checkpoint: \(String(cString: sqlite3_errmsg(db)))")
        }
    }

    /// `{"apiResponse":…"context":{"memberRef":"ann"}…}` → `…"memberRef":"ann-g<group>"…` (the line
    /// stays canonical JSON: no key changes).
    static func suffixMemberRef(_ line: String, group: Int, prefix: String = "") -> String {
        let marker = "\"memberRef\":\""
        guard line.hasPrefix("{\"apiResponse\""), let start = line.range(of: marker),
              let end = line[start.upperBound...].firstIndex(of: "\"") else { return line }
        return String(line[..<end]) + "\(prefix)-g\(group)" + String(line[end...])
    }
}

/// `MessageDecoder.decode` over a batch on all cores, results in input order (what the ledger's
/// own ingest does before its single writer commits).
func parallelDecode(_ decoder: MessageDecoder, _ batch: [InboundMessage]) -> [Result<[NewEvent], IngestRejection>] {
    let slots = DecodeSlots(batch.count)
    DispatchQueue.concurrentPerform(iterations: batch.count) { index in
        slots.set(index, decoder.decode(batch[index]))
    }
    return slots.values
}

/// A decoded batch handed from the background decoder to the committing thread (written once
/// before `DispatchGroup.leave`, read after `wait`).
final class DecodeSlot: @unchecked Sendable {
    var value: [Result<[NewEvent], IngestRejection>]?
}

final class DecodeSlots: @unchecked Sendable {
    // Each iteration writes only its own slot; read after concurrentPerform returns.
    private var slots: [Result<[NewEvent], IngestRejection>?]
    init(_ count: Int) { slots = Array(repeating: nil, count: count) }
    func set(_ index: Int, _ value: Result<[NewEvent], IngestRejection>) { slots.withUnsafeMutableBufferPointer { $0[index] = value } }
    var values: [Result<[NewEvent], IngestRejection>] { slots.map { $0! } }
}

/// `reset-projections`: empties the projection caches of a ledger (facts, group index, the group
/// snapshots of schema 4, and a schema 1 ledger's `group_state`) so the next `seatledger rebuild` derives everything from the log again, exactly as
/// on a ledger built without projection maintenance. Events are untouched (they cannot be
/// updated or deleted anyway). Tables that do not exist are skipped.
enum ResetProjections {
    static let tables = ["event_facts", "group_index", "group_snapshot", "group_state"]

    static func run(_ arguments: [String]) throws {
        let options = try Options(arguments, valued: ["--db"])
        let path = try options.string("--db")
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let db else { throw BenchError("cannot open \(path)") }
        defer { sqlite3_close_v2(db) }
        sqlite3_busy_timeout(db, 30_000)
        func exec(_ sql: String) throws {
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw BenchError("\(sql): \(String(cString: sqlite3_errmsg(db)))") }
        }
        var cleared: [String] = []
        try exec("BEGIN IMMEDIATE")
        for table in tables {
            var statement: OpaquePointer?
            sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", -1, &statement, nil)
            sqlite3_bind_text(statement, 1, table, -1, seatledger_sqlite_transient())
            let exists = sqlite3_step(statement) == SQLITE_ROW
            sqlite3_finalize(statement)
            if exists {
                try exec("DELETE FROM \(table)")
                cleared.append(table)
            }
        }
        try exec("COMMIT")
        try exec("PRAGMA wal_checkpoint(TRUNCATE)")
        try emit(["reset_tables": cleared])
    }
}
