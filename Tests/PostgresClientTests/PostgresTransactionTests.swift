import Foundation
import PostgresClient
import PostgresTestSupport
import Testing

/// `transaction { … }`: commit, rollback on throw, isolation options, and the aborted-transaction trap.
@Suite("PostgreSQL transactions")
struct PostgresTransactionTests {
    struct Refusal: Error {}

    @Test("a body that returns commits; its value is returned")
    func commits() throws {
        let cluster = try PostgresTestCluster()
        let connection = try cluster.connect()
        try connection.execute("CREATE TABLE t (n bigint)")
        let inserted = try connection.transaction {
            #expect(connection.isInTransaction)
            return try connection.query("INSERT INTO t SELECT generate_series(1, 5)").affectedRows
        }
        #expect(inserted == 5)
        #expect(!connection.isInTransaction)
        let other = try cluster.connect()
        #expect(try other.scalarInt64("SELECT count(*) FROM t") == 5, "visible to another session after COMMIT")
    }

    @Test("a body that throws rolls back and the error is rethrown unchanged")
    func rollsBackOnThrow() throws {
        let cluster = try PostgresTestCluster()
        let connection = try cluster.connect()
        try connection.execute("CREATE TABLE t (n bigint)")
        #expect(throws: Refusal.self) {
            try connection.transaction {
                try connection.query("INSERT INTO t VALUES (1), (2)")
                throw Refusal()
            }
        }
        #expect(!connection.isInTransaction)
        #expect(try connection.scalarInt64("SELECT count(*) FROM t") == 0)
        // A server error inside the body rolls back too, and arrives as the PostgresError it was.
        try connection.execute("CREATE TABLE u (n bigint PRIMARY KEY)")
        let error = #expect(throws: PostgresError.self) {
            try connection.transaction {
                try connection.query("INSERT INTO u VALUES (1)")
                try connection.query("INSERT INTO u VALUES (1)")
            }
        }
        #expect(error?.sqlState == "23505")
        #expect(try connection.scalarInt64("SELECT count(*) FROM u") == 0)
    }

    @Test("a caught server error does not turn COMMIT into a silent ROLLBACK")
    func caughtErrorIsNotCommitted() throws {
        let cluster = try PostgresTestCluster()
        let connection = try cluster.connect()
        try connection.execute("CREATE TABLE u (n bigint PRIMARY KEY)")
        let error = #expect(throws: PostgresError.self) {
            try connection.transaction {
                try connection.query("INSERT INTO u VALUES (1)")
                _ = try? connection.query("INSERT INTO u VALUES (1)")  // swallowed: the transaction is now aborted
            }
        }
        #expect(error?.sqlState == "25P02")
        #expect(!connection.isInTransaction)
        #expect(try connection.scalarInt64("SELECT count(*) FROM u") == 0)
    }

    @Test("isolation level and read-only options reach the server; transactions do not nest")
    func options() throws {
        let cluster = try PostgresTestCluster()
        let connection = try cluster.connect()
        for level in PostgresIsolationLevel.allCases {
            let shown = try connection.transaction(isolation: level) {
                try connection.query("SHOW transaction_isolation")[0].text(0)
            }
            #expect(shown.uppercased() == level.rawValue)
        }
        try connection.execute("CREATE TABLE t (n bigint)")
        let readOnly = #expect(throws: PostgresError.self) {
            try connection.transaction(readOnly: true) { try connection.query("INSERT INTO t VALUES (1)") }
        }
        #expect(readOnly?.sqlState == "25006")
        let nested = #expect(throws: PostgresError.self) {
            try connection.transaction { try connection.transaction { () } }
        }
        #expect(nested?.kind == .usage)
        #expect(!connection.isInTransaction)
    }

    @Test("a SERIALIZABLE write conflict fails with 40001 and nothing of the loser is kept")
    func serializationFailure() throws {
        let cluster = try PostgresTestCluster()
        let first = try cluster.connect()
        let second = try cluster.connect()
        try first.execute("CREATE TABLE seats (id bigint PRIMARY KEY, holder text); INSERT INTO seats VALUES (1, NULL)")
        let error = #expect(throws: PostgresError.self) {
            try first.transaction(isolation: .serializable) {
                _ = try first.query("SELECT holder FROM seats WHERE id = 1")
                // A concurrent transaction commits a change to the row in between.
                try second.transaction { try second.query("UPDATE seats SET holder = 'b' WHERE id = 1") }
                try first.query("UPDATE seats SET holder = 'a' WHERE id = 1")
            }
        }
        #expect(error?.isSerializationFailure == true, "\(String(describing: error))")
        #expect(try first.query("SELECT holder FROM seats WHERE id = 1")[0].text(0) == "b")
    }
}
