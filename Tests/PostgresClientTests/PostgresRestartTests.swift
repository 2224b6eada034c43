import Foundation
import PostgresClient
import PostgresTestSupport
import Testing

/// The server going away under an open connection.
@Suite("PostgreSQL restart")
struct PostgresRestartTests {
    @Test("after a cluster restart the old connection fails with a clear connection error, then works after reconnect")
    func reconnectAfterRestart() throws {
        let cluster = try PostgresTestCluster()
        let connection = try cluster.connect()
        try connection.execute("CREATE TABLE t (n bigint); INSERT INTO t VALUES (1)")
        _ = try connection.preparedQuery("SELECT count(*) FROM t WHERE n > $1", [.int64(0)])
        let pidBefore = connection.backendProcessID

        let started = Date()
        try cluster.restart()
        let restartSeconds = Date().timeIntervalSince(started)

        let error = #expect(throws: PostgresError.self) { try connection.query("SELECT count(*) FROM t") }
        #expect(error?.kind == .connection, "\(String(describing: error))")
        #expect(error?.isConnectionFailure == true)
        #expect(!connection.isConnected)
        // Still failing, the same way, until reconnect (no silent reconnect behind the caller's back).
        #expect(throws: PostgresError.self) { try connection.execute("SELECT 1") }

        try connection.reconnect()
        #expect(connection.isConnected)
        #expect(connection.backendProcessID != pidBefore)
        #expect(try connection.scalarInt64("SELECT count(*) FROM t") == 1)
        // The prepared-statement cache was dropped with the old session.
        #expect(try connection.preparedQuery("SELECT count(*) FROM t WHERE n > $1", [.int64(0)])[0].int64(0) == 1)
        print("PostgresTestCluster.restart(): \(String(format: "%.2f", restartSeconds)) s; the old connection said: \(error.map { "\($0)" } ?? "-")")
    }

    @Test("reconnect while the server is down fails with a connection error")
    func reconnectWhileDown() throws {
        let cluster = try PostgresTestCluster()
        let connection = try cluster.connect()
        cluster.stop()
        #expect(throws: PostgresError.self) { try connection.execute("SELECT 1") }
        let error = #expect(throws: PostgresError.self) { try connection.reconnect() }
        #expect(error?.kind == .connection)
        try cluster.start()
        try connection.reconnect()
        #expect(try connection.scalarInt64("SELECT 42") == 42)
    }
}
