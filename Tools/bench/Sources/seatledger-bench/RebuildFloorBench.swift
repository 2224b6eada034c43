import CSQLite
import EventStore
import Foundation
import LedgerStorage

/// The storage floor of a rebuild: what SQLite alone takes to read a rebuild's input and write its
/// output for one ledger, with no computation in between.
///
/// Run on a ledger that a rebuild has just filled (step 4). Timed, each on its own:
/// - `read_facts`: every stored facts row, in position order (what a warm rebuild reads);
/// - `read_decoded`: every event's metadata and decoded JSON text through the same query a cold
///   rebuild derives facts with (`EventStore.eventsForFactsSQL`, the covering index);
/// - `write_facts`: the same facts rows into a fresh file (what a cold rebuild stores);
/// - `write_projections`: the rebuilt `group_index` rows (already sorted by key, so no sort is
///   timed) into a fresh file, then `group_index_key`, in one transaction,
///   and the close that checkpoints the WAL (the rebuild's process pays that at exit too).
///
/// The fresh files use the ledger's settings: 16 KiB pages, WAL, `synchronous = FULL`, the
/// rebuild's 16 MiB page cache. A ledger has one writer, and reading can run on the other core
/// (a rebuild's scans do), so the floors count the writes only; each is a lower bound on a
/// rebuild's time on this machine with this schema, whatever the computation costs:
/// warm = write_projections; cold = write_facts + write_projections (a cold rebuild stores the
/// facts it derives). The reads are reported beside them.
enum RebuildFloorBench {
    static func run(_ arguments: [String]) throws {
        let options = try Options(arguments, valued: ["--db", "--scratch"])
        let ledger = try options.string("--db")
        let scratch = try options.string("--scratch")

        let source = try Database(path: ledger, readOnly: true)
        try source.exec("PRAGMA cache_size = -2048")

        log("floor: reading facts")
        var facts = Rows(columns: 1)
        var positions: [Int64] = []
        let readFacts = try time {
            try source.each("SELECT position, facts FROM event_facts ORDER BY position") { statement in
                positions.append(sqlite3_column_int64(statement, 0))
                facts.append(blobColumns: [1], of: statement)
            }
        }
        guard !positions.isEmpty else { throw BenchError("\(ledger) has no facts: run a rebuild first") }

        log("floor: reading decoded events")
        var decodedBytes = 0
        let readDecoded = try time {
            try source.each(EventStore.eventsForFactsSQL, bind: [Int64.min, Int64.max]) { statement in
                // Text columns as a derivation reads them (sqlite3_column_text brings in overflow pages).
                for column: Int32 in [1, 2, 3, 4, 8, 9, 10] {
                    if sqlite3_column_text(statement, column) != nil, column == 10 {
                        decodedBytes += Int(sqlite3_column_bytes(statement, column))
                    }
                }
            }
        }

        log("floor: loading the rebuilt projections (untimed)")
        var index = Rows(columns: 3)
        try source.each("SELECT identifier, group_key, role FROM group_index ORDER BY identifier, group_key, role") { statement in
            index.append(blobColumns: [0, 1, 2], of: statement)
        }
        var groups = 0
        try source.each("SELECT count(DISTINCT group_key) FROM group_index") { statement in groups = Int(sqlite3_column_int64(statement, 0)) }
        guard groups > 0 else { throw BenchError("\(ledger) has no group_index rows: run a rebuild first") }

        log("floor: writing facts to a fresh file")
        let writeFacts = try time {
            let db = try Database.fresh(at: scratch)
            try db.exec("CREATE TABLE event_facts (position INTEGER PRIMARY KEY, facts BLOB NOT NULL)")
            try db.transaction {
                try db.insert("INSERT INTO event_facts(position, facts) VALUES (?, ?)", rows: facts.count) { statement, row in
                    sqlite3_bind_int64(statement, 1, positions[row])
                    facts.bind(row, column: 0, to: statement, at: 2, asText: false)
                }
            }
            db.close()
        }

        log("floor: writing projections to a fresh file")
        var insertIndex = 0.0, createIndex = 0.0
        let writeProjections = try time {
            let db = try Database.fresh(at: scratch)
            try db.exec("""
                CREATE TABLE group_index (identifier TEXT NOT NULL, group_key TEXT NOT NULL, role TEXT NOT NULL,
                    PRIMARY KEY (identifier, group_key, role)) WITHOUT ROWID;
                """)
            try db.transaction {
                insertIndex = try time { try db.insert("INSERT INTO group_index(identifier, group_key, role) VALUES (?, ?, ?)", rows: index.count) { statement, row in
                    for column in 0..<3 { index.bind(row, column: column, to: statement, at: Int32(column + 1), asText: true) }
                } }
                createIndex = try time { try db.exec("CREATE INDEX group_index_key ON group_index(group_key)") }
            }
            db.close()
        }
        for suffix in ["", "-wal", "-shm"] { unlink(scratch + suffix) }

        let events = Double(positions.count)
        let warm = writeProjections
        let cold = writeFacts + writeProjections
        try emit([
            "rebuild_floor_events": positions.count,
            "rebuild_floor_groups": groups,
            "rebuild_floor_index_rows": index.count,
            "rebuild_floor_facts_mb": round(Double(facts.byteCount) / 1_048_576, 1),
            "rebuild_floor_decoded_mb": round(Double(decodedBytes) / 1_048_576, 1),
            "rebuild_floor_read_facts_seconds": round(readFacts, 3),
            "rebuild_floor_read_decoded_seconds": round(readDecoded, 3),
            "rebuild_floor_write_facts_seconds": round(writeFacts, 3),
            "rebuild_floor_write_projections_seconds": round(writeProjections, 3),
            "rebuild_floor_insert_index_rows_seconds": round(insertIndex, 3),
            "rebuild_floor_create_key_index_seconds": round(createIndex, 3),
            "rebuild_floor_commit_and_close_seconds": round(writeProjections - insertIndex - createIndex, 3),
            "rebuild_floor_warm_seconds": round(warm, 3),
            "rebuild_floor_cold_seconds": round(cold, 3),
            "rebuild_floor_warm_events_per_s": round(events / warm, 0),
            "rebuild_floor_cold_events_per_s": round(events / cold, 0),
        ])
    }

    private static func time(_ body: () throws -> Void) rethrows -> Double {
        let started = now()
        try body()
        return now() - started
    }
}

/// Rows of byte columns, back to back in one buffer (a million rows without a million strings).
private struct Rows {
    let columns: Int
    private var bytes: [UInt8] = []
    /// Where each cell ends in `bytes`, row by row.
    private var ends: [Int] = []

    init(columns: Int) { self.columns = columns }

    var count: Int { ends.count / columns }
    var byteCount: Int { bytes.count }

    /// Appends the statement's current row, the given columns as bytes.
    mutating func append(blobColumns: [Int32], of statement: OpaquePointer) {
        for column in blobColumns {
            let length = Int(sqlite3_column_bytes(statement, column))
            if let pointer = sqlite3_column_blob(statement, column), length > 0 {
                bytes.append(contentsOf: UnsafeRawBufferPointer(start: pointer, count: length))
            }
            ends.append(bytes.count)
        }
    }

    /// Binds cell (`row`, `column`) to parameter `index`; SQLite copies the bytes (as the ledger's
    /// own statements bind text), so nothing points into this buffer after the call.
    func bind(_ row: Int, column: Int, to statement: OpaquePointer, at index: Int32, asText: Bool) {
        let cell = row * columns + column
        let start = cell == 0 ? 0 : ends[cell - 1]
        let length = Int32(ends[cell] - start)
        bytes.withUnsafeBytes { all in
            // An empty cell still binds an empty value, not NULL (a null pointer would).
            let pointer = length == 0 ? nil : all.baseAddress.map { $0 + start }
            if asText {
                if let pointer {
                    sqlite3_bind_text(statement, index, pointer.assumingMemoryBound(to: CChar.self), length, seatledger_sqlite_transient())
                } else {
                    sqlite3_bind_text(statement, index, "", 0, seatledger_sqlite_transient())
                }
            } else if let pointer {
                sqlite3_bind_blob(statement, index, pointer, length, seatledger_sqlite_transient())
            } else {
                sqlite3_bind_zeroblob(statement, index, 0)
            }
        }
    }
}

/// One raw SQLite connection for the floor (closed in `deinit` if not before).
private final class Database {
    private var handle: OpaquePointer?
    let path: String

    init(path: String, readOnly: Bool) throws {
        self.path = path
        let flags = readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        guard sqlite3_open_v2(path, &handle, flags, nil) == SQLITE_OK else {
            defer { sqlite3_close_v2(handle) }
            throw BenchError("cannot open \(path): \(handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory")")
        }
        sqlite3_busy_timeout(handle, 30_000)
    }

    /// A new, empty file at `path` with the ledger's settings and a rebuild's page cache.
    static func fresh(at path: String) throws -> Database {
        for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
        let db = try Database(path: path, readOnly: false)
        try db.exec("PRAGMA page_size = 16384; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA cache_size = -16384")
        return db
    }

    deinit { close() }

    /// Closes the connection (the last one to a WAL file checkpoints it and removes the log).
    func close() {
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    private var message: String { handle.map { String(cString: sqlite3_errmsg($0)) } ?? "closed" }

    func exec(_ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else { throw BenchError("\(path): \(sql): \(message)") }
    }

    func transaction(_ body: () throws -> Void) throws {
        try exec("BEGIN IMMEDIATE")
        do {
            try body()
            try exec("COMMIT")
        } catch {
            try? exec("ROLLBACK")
            throw error
        }
    }

    private func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw BenchError("\(path): prepare \(sql): \(message)")
        }
        return statement
    }

    /// Runs a query, calling `row` for each result row.
    func each(_ sql: String, bind: [Int64] = [], _ row: (OpaquePointer) throws -> Void) throws {
        let statement = try prepare(sql)
        defer { sqlite3_finalize(statement) }
        for (offset, value) in bind.enumerated() { sqlite3_bind_int64(statement, Int32(offset + 1), value) }
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { return }
            guard rc == SQLITE_ROW else { throw BenchError("\(path): \(sql): \(message)") }
            try row(statement)
        }
    }

    /// Runs one prepared insert `rows` times, `bind` setting its parameters for each.
    func insert(_ sql: String, rows: Int, bind: (OpaquePointer, Int) -> Void) throws {
        let statement = try prepare(sql)
        defer { sqlite3_finalize(statement) }
        for row in 0..<rows {
            bind(statement, row)
            guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchError("\(path): \(sql): \(message)") }
            sqlite3_reset(statement)
        }
    }
}
