import CLibPQ
import Foundation

/// One PostgreSQL connection through libpq, owned: closed with `PQfinish` in `deinit`.
///
/// Deliberately not `Sendable`: libpq allows one thread at a time on a `PGconn`, and a connection
/// carries session state (an open transaction, prepared statements). Like `SQLiteConnection`,
/// its owner serialises access; a thread that needs the database opens its own connection.
public final class PostgresConnection {
    let handle: OpaquePointer
    /// Prepared statements of this session, by SQL text and parameter type signature.
    private var preparedStatements: [PreparedKey: String] = [:]
    private var nextStatementNumber = 0

    private struct PreparedKey: Hashable {
        let sql: String
        let types: [Oid]
    }

    /// Connects to a `postgresql://user:password@host:port/database?options` URL (or a libpq
    /// `key=value` string), waiting at most `connectTimeoutSeconds`. Options in the URL win.
    public init(url: String, connectTimeoutSeconds: Int = 10, applicationName: String = "seatledger") throws(PostgresError) {
        // Entries before "dbname" are defaults the expanded URL may override (libpq processes in order).
        let keywords = ["connect_timeout", "application_name", "client_encoding", "dbname"]
        let values = [String(connectTimeoutSeconds), applicationName, "UTF8", url]
        let connection = Self.withCStringArray(keywords) { keywords in
            Self.withCStringArray(values) { values in PQconnectdbParams(keywords, values, 1) }
        }
        guard let connection else {
            throw PostgresError(kind: .connection, message: "libpq could not allocate a connection (out of memory)")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            // PQerrorMessage names host and port but never the password.
            let message = PostgresError.string(PQerrorMessage(connection)) ?? "cannot connect"
            PQfinish(connection)
            throw PostgresError(kind: .connection, message: message)
        }
        seatledger_pq_silence_notices(connection)
        handle = connection
    }

    deinit { PQfinish(handle) }

    /// Whether the connection is usable (`PQstatus` is `CONNECTION_OK`); a lost server makes it `false`.
    public var isConnected: Bool { PQstatus(handle) == CONNECTION_OK }

    /// Whether a transaction block is open (idle in it, or aborted by an error inside it).
    public var isInTransaction: Bool {
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    /// Whether the open transaction was aborted by an error and only accepts ROLLBACK.
    public var isTransactionAborted: Bool { PQtransactionStatus(handle) == PQTRANS_INERROR }

    /// The server version as an integer, e.g. `150018` for 15.18.
    public var serverVersion: Int { Int(PQserverVersion(handle)) }

    /// The process id of the server backend serving this connection.
    public var backendProcessID: Int32 { PQbackendPID(handle) }

    /// Closes and reopens the connection with the same parameters (after a lost server), forgetting prepared statements.
    public func reconnect() throws(PostgresError) {
        preparedStatements.removeAll()
        PQreset(handle)
        guard PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError(kind: .connection, message: PostgresError.string(PQerrorMessage(handle)) ?? "cannot reconnect")
        }
    }

    /// Runs one or more `;`-separated statements without parameters (`PQexec`); rows are discarded.
    ///
    /// Several statements run in one implicit transaction unless the text has its own BEGIN/COMMIT.
    public func execute(_ sql: String) throws(PostgresError) {
        _ = try check(PQexec(handle, sql), sql: sql)
    }

    /// Runs one statement with `$1…$n` parameters (`PQexecParams`, planned each time).
    @discardableResult
    public func query(_ sql: String, _ parameters: [PostgresValue] = [], parameterFormat: PostgresFormat = .binary,
                      resultFormat: PostgresFormat = .text) throws(PostgresError) -> PostgresResult {
        let encoded = try PostgresParameters(parameters, format: parameterFormat, sql: sql)
        let result = encoded.withUnsafeArguments { types, values, lengths, formats in
            PQexecParams(handle, sql, Int32(encoded.count), types, values, lengths, formats, resultFormat.rawValue)
        }
        return try check(result, sql: sql)
    }

    /// Runs one statement through a server-side prepared statement, prepared on first use and
    /// cached by SQL text (and parameter types) for the life of the session.
    @discardableResult
    public func preparedQuery(_ sql: String, _ parameters: [PostgresValue] = [], parameterFormat: PostgresFormat = .binary,
                              resultFormat: PostgresFormat = .text) throws(PostgresError) -> PostgresResult {
        let encoded = try PostgresParameters(parameters, format: parameterFormat, sql: sql)
        let name = try preparedStatementName(sql: sql, types: encoded.types)
        let result = encoded.withUnsafeArguments { _, values, lengths, formats in
            PQexecPrepared(handle, name, Int32(encoded.count), values, lengths, formats, resultFormat.rawValue)
        }
        do {
            return try check(result, sql: sql)
        } catch {
            // 26000: the session lost the statement (DISCARD ALL); 0A000: "cached plan must not
            // change result type" after DDL. Forget it so the next call prepares afresh.
            if error.sqlState == "26000" || error.sqlState == "0A000" {
                preparedStatements[PreparedKey(sql: sql, types: encoded.types)] = nil
            }
            throw error
        }
    }

    /// The first column of the first row as an integer; `nil` when there is no row or it is NULL.
    public func scalarInt64(_ sql: String, _ parameters: [PostgresValue] = []) throws(PostgresError) -> Int64? {
        let result = try query(sql, parameters)
        guard result.rowCount > 0, result.columnCount > 0 else { return nil }
        return try result.optionalInt64(row: 0, column: 0)
    }

    /// `identifier` double-quoted for SQL (embedded quotes doubled), e.g. a table or column name.
    public static func quoteIdentifier(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    // MARK: - Internals

    private func preparedStatementName(sql: String, types: [Oid]) throws(PostgresError) -> String {
        let key = PreparedKey(sql: sql, types: types)
        if let name = preparedStatements[key] { return name }
        nextStatementNumber += 1
        let name = "seatledger_\(nextStatementNumber)"
        let result = types.withUnsafeBufferPointer { types in
            PQprepare(handle, name, sql, Int32(types.count), types.baseAddress)
        }
        _ = try check(result, sql: sql)
        preparedStatements[key] = name
        return name
    }

    /// Takes ownership of a `PGresult`: a successful one is returned, a failed one becomes a thrown error.
    func check(_ result: OpaquePointer?, sql: String) throws(PostgresError) -> PostgresResult {
        guard let result else { throw PostgresError(connection: handle, sql: sql) }
        let status = PQresultStatus(result)
        switch status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return PostgresResult(handle: result, sql: sql)
        case PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_COPY_BOTH:
            PQclear(result)
            abandonCopy(reason: "COPY is only supported through copyIn(table:columns:format:_:)")
            throw PostgresError(kind: .usage, message: "COPY needs copyIn(table:columns:format:_:), not execute/query", sql: sql)
        default:
            let error = PostgresError(result: result, connection: handle, sql: sql)
            PQclear(result)
            throw error
        }
    }

    /// Leaves a COPY state libpq entered unexpectedly, discarding its results.
    func abandonCopy(reason: String) {
        for _ in 0..<100 {  // bounded: a broken connection must not spin here
            guard let result = PQgetResult(handle) else { return }
            let status = PQresultStatus(result)
            PQclear(result)
            if status == PGRES_COPY_IN {
                _ = PQputCopyEnd(handle, reason)
            } else if status == PGRES_COPY_OUT {
                var buffer: UnsafeMutablePointer<CChar>?
                while PQgetCopyData(handle, &buffer, 0) > 0 { PQfreemem(buffer) }
            } else if status == PGRES_COPY_BOTH || PQstatus(handle) == CONNECTION_BAD {
                break
            }
        }
    }

    /// Reads and discards the rest of the results of the current command.
    func drainResults() {
        for _ in 0..<100 {  // bounded: a connection stuck in COPY would return results forever
            guard let result = PQgetResult(handle) else { return }
            PQclear(result)
        }
    }

    /// A NULL-terminated array of C strings, valid inside `body`.
    private static func withCStringArray<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
        let copies: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
    }
}
