import CSQLite
import Foundation

/// Raw batched SQLite inserts per second of the benchmark stream's lines, exactly as received:
/// one plain table (`id INTEGER PRIMARY KEY, raw BLOB`), WAL, `synchronous = FULL` (like the
/// ledger), one `BEGIN IMMEDIATE … COMMIT` per 1000 rows, one prepared statement. No hash chain,
/// no indexes, no decoded JSON, no projections: the storage ceiling of a durable append.
/// Only the transactions are timed (reading the lines is not).
enum SQLiteBench {
    static func run(_ arguments: [String]) throws {
        let options = try Options(arguments, valued: ["--input", "--db", "--rows", "--batch"])
        let input = try options.string("--input")
        let path = try options.string("--db")
        let limit = try options.int("--rows", default: Int.max)
        let batchSize = try options.int("--batch", default: 1000)
        for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }

        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK, let db else {
            throw BenchError("cannot open \(path)")
        }
        defer { sqlite3_close_v2(db) }
        func exec(_ sql: String) throws {
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
                throw BenchError("\(sql): \(String(cString: sqlite3_errmsg(db)))")
            }
        }
        try exec("PRAGMA journal_mode = WAL")
        try exec("PRAGMA synchronous = FULL")
        try exec("CREATE TABLE raw(id INTEGER PRIMARY KEY, raw BLOB NOT NULL)")
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, "INSERT INTO raw(raw) VALUES (?)", -1, &statement, nil) == SQLITE_OK, let statement else {
            throw BenchError("prepare: \(String(cString: sqlite3_errmsg(db)))")
        }
        defer { sqlite3_finalize(statement) }

        let file = try LineFile(path: input)
        var rows = 0, bytes = 0, transactions = 0
        var timed = 0.0
        var batch: [Data] = []
        batch.reserveCapacity(batchSize)
        while rows < limit {
            batch.removeAll(keepingCapacity: true)
            while batch.count < batchSize, rows + batch.count < limit, let line = file.next() { batch.append(line) }
            if batch.isEmpty { break }
            let started = now()
            try exec("BEGIN IMMEDIATE")
            for line in batch {
                let rc: Int32 = line.withUnsafeBytes { raw in
                    sqlite3_bind_blob(statement, 1, raw.baseAddress, Int32(raw.count), seatledger_sqlite_static())
                    return sqlite3_step(statement)
                }
                guard rc == SQLITE_DONE else { throw BenchError("insert: \(String(cString: sqlite3_errmsg(db)))") }
                sqlite3_reset(statement)
                sqlite3_clear_bindings(statement)
                bytes += line.count
            }
            try exec("COMMIT")
            timed += now() - started
            rows += batch.count
            transactions += 1
        }
        guard rows > 0, timed > 0 else { throw BenchError("no rows in \(input)") }
        try emit([
            "sqlite_inserts_per_s": round(Double(rows) / timed, 0),
            "sqlite_rows": rows,
            "sqlite_mb_per_s": round(Double(bytes) / 1_048_576 / timed, 1),
            "sqlite_transactions_per_s": round(Double(transactions) / timed, 1),
            "sqlite_seconds": round(timed, 3),
            "sqlite_version": String(cString: sqlite3_libversion()),
        ])
    }
}
