import Foundation
import PostgresClient
import PostgresTestSupport
import Testing

/// The bulk path: COPY FROM STDIN in binary and text format.
@Suite("PostgreSQL COPY bulk load")
struct PostgresCopyTests {
    struct Stop: Error {}

    @Test("100,000 rows through COPY, every format; count, sums and values come back", arguments: [PostgresFormat.binary, .text])
    func bulk(format: PostgresFormat) throws {
        let cluster = try PostgresTestCluster()
        let connection = try cluster.connect()
        try connection.execute("CREATE TABLE events (position bigint PRIMARY KEY, event_id text NOT NULL, raw bytea, note text)")
        let count: Int64 = 100_000
        let started = Date()
        let stored = try connection.copyIn(table: "events", columns: ["position", "event_id", "raw", "note"], format: format) { writer in
            for position in 1...count {
                try writer.writeRow([
                    .int64(position),
                    .text("evt-\(position)"),
                    .bytea(Data([UInt8(truncatingIfNeeded: position), 0, 0x5C, 0x0A, 0xFF])),
                    position % 10 == 0 ? .null : .text("tab\there \\ \(position)\nnext line é"),
                ])
            }
        }
        let seconds = Date().timeIntervalSince(started)
        #expect(stored == count)
        let summary = try connection.query("SELECT count(*), sum(position)::bigint, count(note), count(DISTINCT event_id) FROM events")[0]
        #expect(try summary.int64(0) == count)
        #expect(try summary.int64(1) == count * (count + 1) / 2)
        #expect(try summary.int64(2) == count - count / 10)
        #expect(try summary.int64(3) == count)
        let sample = try connection.query("SELECT raw, note FROM events WHERE position = $1", [.int64(77_777)])[0]
        #expect(try sample.bytea("raw") == Data([UInt8(truncatingIfNeeded: 77_777), 0, 0x5C, 0x0A, 0xFF]))
        #expect(try sample.text("note") == "tab\there \\ 77777\nnext line é")
        #expect(try connection.query("SELECT note FROM events WHERE position = 70")[0].optionalText(0) == nil)
        print("COPY \(format) of \(count) rows: \(String(format: "%.2f", seconds)) s (\(Int(Double(count) / seconds)) rows/s)")
    }

    @Test("a body that throws cancels the COPY: nothing is stored, the error is rethrown, the connection still works")
    func cancelled() throws {
        let cluster = try PostgresTestCluster()
        let connection = try cluster.connect()
        try connection.execute("CREATE TABLE t (n bigint)")
        #expect(throws: Stop.self) {
            try connection.copyIn(table: "t", columns: ["n"]) { writer in
                for n in 0..<50_000 { try writer.writeRow(.int64(Int64(n))) }
                throw Stop()
            }
        }
        #expect(connection.isConnected)
        #expect(try connection.scalarInt64("SELECT count(*) FROM t") == 0)
        // Inside a transaction, a COPY that commits is kept with the rest.
        try connection.transaction {
            try connection.copyIn(table: "t", columns: ["n"], format: .text) { writer in
                for n in 1...3 { try writer.writeRow(.int64(Int64(n))) }
            }
            try connection.query("INSERT INTO t VALUES (4)")
        }
        #expect(try connection.scalarInt64("SELECT sum(n) FROM t") == 10)
    }

    @Test("a row the server refuses fails the whole COPY with the server's SQLSTATE")
    func refusedRow() throws {
        let cluster = try PostgresTestCluster()
        let connection = try cluster.connect()
        try connection.execute("CREATE TABLE t (n bigint PRIMARY KEY)")
        let error = #expect(throws: PostgresError.self) {
            try connection.copyIn(table: "t", columns: ["n"]) { writer in
                for n in [1, 2, 3, 2, 4] { try writer.writeRow(.int64(Int64(n))) }
            }
        }
        #expect(error?.sqlState == "23505")
        #expect(error?.sql?.hasPrefix("COPY \"t\" (\"n\") FROM STDIN") == true)
        #expect(try connection.scalarInt64("SELECT count(*) FROM t") == 0)
        // Wrong arity is refused client-side.
        let arity = #expect(throws: PostgresError.self) {
            try connection.copyIn(table: "t", columns: ["n"]) { writer in try writer.writeRow(.int64(1), .int64(2)) }
        }
        #expect(arity?.kind == .usage)
        // A missing table fails when the COPY starts.
        let missing = #expect(throws: PostgresError.self) {
            try connection.copyIn(table: "nope", columns: ["n"]) { _ in }
        }
        #expect(missing?.sqlState == "42P01")
        #expect(try connection.scalarInt64("SELECT 1") == 1)
    }
}
