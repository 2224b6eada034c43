import Foundation
import PostgresClient
import PostgresTestSupport
import Testing

/// Connecting, typed round trips and errors against a real throwaway cluster.
@Suite("PostgreSQL connection and values")
struct PostgresConnectionTests {
    @Test("connects from a postgresql:// URL and reports the server")
    func connect() throws {
        let cluster = try PostgresTestCluster()
        let connection = try cluster.connect()
        #expect(connection.isConnected)
        #expect(connection.serverVersion >= 120_000)
        #expect(connection.backendProcessID > 0)
        #expect(!connection.isInTransaction)
        #expect(try connection.query("SELECT current_database()").first?.text(0) == cluster.database)
        #expect(try connection.query("SHOW client_encoding").first?.text(0) == "UTF8")
    }

    @Test("a closed port is a connection error naming host and port")
    func connectionRefused() throws {
        let port = try PostgresTestCluster.freePort()
        do {
            _ = try PostgresConnection(url: "postgresql://postgres@127.0.0.1:\(port)/x?sslmode=disable", connectTimeoutSeconds: 2)
            Issue.record("connected to a closed port")
        } catch {
            #expect(error.kind == .connection)
            #expect(error.isConnectionFailure)
            #expect(error.message.contains("\(port)"), "\(error)")
        }
    }

    @Test("bytea round-trips all 256 byte values, in every parameter and result format",
          arguments: [PostgresFormat.binary, .text], [PostgresFormat.binary, .text])
    func byteaRoundTrip(parameterFormat: PostgresFormat, resultFormat: PostgresFormat) throws {
        let cluster = try PostgresTestCluster()
        let connection = try cluster.connect()
        try connection.execute("CREATE TABLE blobs (id bigint PRIMARY KEY, body bytea)")
        let all = Data((0...255).map { UInt8($0) })
        let values: [Data] = [all, Data(all.reversed()), Data(), Data([0]), Data(repeating: 0x5C, count: 1000)]
        for (id, value) in values.enumerated() {
            try connection.query("INSERT INTO blobs (id, body) VALUES ($1, $2)", [.int64(Int64(id)), .bytea(value)],
                                 parameterFormat: parameterFormat)
        }
        let result = try connection.query("SELECT id, body, length(body) FROM blobs ORDER BY id", resultFormat: resultFormat)
        #expect(result.rowCount == values.count)
        for row in result {
            let id = Int(try row.int64("id"))
            #expect(try row.bytea("body") == values[id])
            #expect(try row.int64(2) == Int64(values[id].count))
        }
        // And straight back from a parameter, without a table.
        let echo = try connection.query("SELECT $1::bytea", [.bytea(all)], parameterFormat: parameterFormat, resultFormat: resultFormat)
        #expect(try echo[0].bytea(0) == all)
    }

    @Test("NULL, int64 extremes and unicode text round-trip", arguments: [PostgresFormat.binary, .text])
    func scalarRoundTrip(format: PostgresFormat) throws {
        let cluster = try PostgresTestCluster()
        let connection = try cluster.connect()
        try connection.execute("CREATE TABLE scalars (id serial PRIMARY KEY, n bigint, t text, b bytea)")
        let integers: [Int64] = [.min, .min + 1, -1, 0, 1, Int64(Int32.max) + 1, .max]
        for integer in integers {
            let row = try connection.query("SELECT $1::bigint, $1::bigint + 0 = $1", [.int64(integer)],
                                           parameterFormat: format, resultFormat: format)[0]
            #expect(try row.int64(0) == integer)
            #expect(try row.bool(1))
        }
        let texts = ["", "plain", "tab\tnew\nline\\back'quote\"", "naïve café — 日本語 — 🧾🪑", String(repeating: "é", count: 10_000)]
        for text in texts {
            try connection.query("INSERT INTO scalars (n, t, b) VALUES ($1, $2, $3)", [.null, .text(text), .null], parameterFormat: format)
        }
        let rows = try connection.query("SELECT n, t, b, t IS NULL FROM scalars ORDER BY id", resultFormat: format)
        #expect(rows.map { try? $0.text(1) } == texts)
        for row in rows {
            #expect(try row.isNull(0))
            #expect(try row.optionalInt64(0) == nil)
            #expect(try row.optionalBytea(2) == nil)
            #expect(try row.optionalText("t") != nil)
            #expect(try row.bool(3) == false)
        }
        // Typed accessors refuse a NULL with a decoding error that names the column.
        do {
            _ = try rows[0].int64("n")
            Issue.record("int64 of NULL did not throw")
        } catch {
            #expect(error.kind == .decoding)
            #expect(error.message.contains("\"n\""), "\(error)")
        }
        // Integers of every width decode through int64.
        let widths = try connection.query("SELECT 7::smallint, -8::integer, 9::bigint, 10::oid", resultFormat: format)[0]
        #expect(try (0..<4).map { try widths.int64($0) } == [7, -8, 9, 10])
        // A NUL in text is refused before it is silently truncated.
        #expect(throws: PostgresError.self) { try connection.query("SELECT $1::text", [.text("a\u{0}b")]) }
    }

    @Test("prepared statements are cached by SQL and give the same answers")
    func preparedStatements() throws {
        let cluster = try PostgresTestCluster()
        let connection = try cluster.connect()
        try connection.execute("CREATE TABLE kv (k bigint PRIMARY KEY, v text NOT NULL)")
        for k in 0..<200 {
            try connection.preparedQuery("INSERT INTO kv (k, v) VALUES ($1, $2)", [.int64(Int64(k)), .text("v\(k)")])
        }
        let prepared = try connection.scalarInt64("SELECT count(*) FROM pg_prepared_statements")
        #expect(prepared == 1, "one server-side statement for 200 executions")
        let row = try connection.preparedQuery("SELECT v FROM kv WHERE k = $1", [.int64(123)])
        #expect(try row[0].text("v") == "v123")
        #expect(try connection.preparedQuery("SELECT v FROM kv WHERE k = $1", [.int64(-5)]).isEmpty)
        #expect(try connection.scalarInt64("SELECT count(*) FROM pg_prepared_statements") == 2)
        #expect(try connection.scalarInt64("SELECT count(*) FROM kv") == 200)
    }

    @Test("a unique violation carries SQLSTATE 23505, constraint, detail and the SQL")
    func uniqueViolation() throws {
        let cluster = try PostgresTestCluster()
        let connection = try cluster.connect()
        try connection.execute("CREATE TABLE events (event_id text PRIMARY KEY)")
        let sql = "INSERT INTO events (event_id) VALUES ($1)"
        try connection.query(sql, [.text("a")])
        do {
            try connection.query(sql, [.text("a")])
            Issue.record("duplicate accepted")
        } catch {
            #expect(error.kind == .server)
            #expect(error.sqlState == "23505")
            #expect(error.isUniqueViolation)
            #expect(error.constraint == "events_pkey")
            #expect(error.detail?.contains("(event_id)=(a)") == true, "\(error)")
            #expect(error.sql == sql)
            #expect(error.description.contains("23505") && error.description.contains(sql))
        }
        #expect(connection.isConnected, "a statement error leaves the connection usable")
        #expect(try connection.scalarInt64("SELECT count(*) FROM events") == 1)
    }

    @Test("a syntax error carries SQLSTATE 42601, the position and the SQL; prepared statements too")
    func syntaxError() throws {
        let cluster = try PostgresTestCluster()
        let connection = try cluster.connect()
        let sql = "SELEC 1"
        let runs: [() throws -> Void] = [{ try connection.execute(sql) }, { _ = try connection.query(sql) }, { _ = try connection.preparedQuery(sql) }]
        for run in runs {
            do {
                try run()
                Issue.record("syntax error accepted")
            } catch let error as PostgresError {
                #expect(error.sqlState == "42601")
                #expect(error.position == 1)
                #expect(error.sql == sql)
                #expect(error.message.contains("syntax error"))
            } catch {
                Issue.record("unexpected error \(error)")
            }
        }
        let undefined = #expect(throws: PostgresError.self) { try connection.execute("SELECT * FROM no_such_table; SELECT 1") }
        #expect(undefined?.sqlState == "42P01")
    }

    @Test("execute runs several statements; results of the wrong type are decoding errors")
    func multiStatementAndDecoding() throws {
        let cluster = try PostgresTestCluster()
        let connection = try cluster.connect()
        try connection.execute("""
            CREATE TABLE a (x bigint);
            INSERT INTO a VALUES (1), (2), (3);
            CREATE TABLE b AS SELECT x * 10 AS y FROM a;
            """)
        let result = try connection.query("SELECT sum(y)::bigint AS total, 'not a number' AS word, now() AS at FROM b")
        #expect(try result[0].int64("total") == 60)
        #expect(throws: PostgresError.self) { try result[0].int64("word") }
        #expect(throws: PostgresError.self) { try result[0].bytea("word") }
        #expect(throws: PostgresError.self) { try result[0].int64("missing") }
        #expect(throws: PostgresError.self) { try result.int64(row: 5, column: 0) }
        #expect(try !result[0].text("at").isEmpty, "any type reads as text in text format")
        let binary = try connection.query("SELECT now() AS at", resultFormat: .binary)
        #expect(throws: PostgresError.self) { try binary[0].text(0) }
        let update = try connection.query("UPDATE a SET x = x + 1 WHERE x >= $1", [.int64(2)])
        #expect(update.affectedRows == 2)
        #expect(update.commandTag == "UPDATE 2")
    }
}
