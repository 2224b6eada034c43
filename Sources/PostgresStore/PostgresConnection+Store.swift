import PostgresClient

/// How the store talks to its connection: prepared statements and COPY, with every error that
/// ends the session reported as a connection failure.
///
/// A server shutting down (restart, `pg_terminate_backend`) answers the statement in flight with a
/// FATAL `57P01`; libpq may not have marked the connection bad yet when that result is read, so
/// PostgresClient reports it as a `.server` error. For the store it means the same as a dropped
/// socket — the session and its transaction are gone, reconnect or reopen — so it is a `.connection`
/// error here (`isConnectionFailure`), whichever way the loss was noticed first.
extension PostgresConnection {
    /// ``PostgresConnection/preparedQuery(_:_:parameterFormat:resultFormat:)`` with session-ending errors as `.connection`.
    @discardableResult
    func run(_ sql: String, _ parameters: [PostgresValue] = [], resultFormat: PostgresFormat = .binary) throws(PostgresError) -> PostgresResult {
        do {
            return try preparedQuery(sql, parameters, resultFormat: resultFormat)
        } catch {
            throw sessionAware(error)
        }
    }

    /// Binary ``PostgresConnection/copyIn(table:schema:columns:format:_:)`` with session-ending errors as `.connection`.
    func copy(into table: String, columns: [String], _ body: (PostgresCopyWriter) throws -> Void) throws {
        do {
            try copyIn(table: table, columns: columns, format: .binary, body)
        } catch let error as PostgresError {
            throw sessionAware(error)
        }
    }

    /// `error`, as a `.connection` error when it ended the session: the connection is gone, or the
    /// server said it is terminating it (SQLSTATE class 57P0x: admin or crash shutdown, cannot
    /// connect now, database dropped, idle timeouts) or that the connection failed (class 08).
    func sessionAware(_ error: PostgresError) -> PostgresError {
        guard error.kind != .connection else { return error }
        let state = error.sqlState ?? ""
        guard !isConnected || state.hasPrefix("57P0") || state.hasPrefix("08") else { return error }
        return PostgresError(kind: .connection, sqlState: error.sqlState, message: error.message, detail: error.detail,
                             hint: error.hint, constraint: error.constraint, position: error.position, sql: error.sql)
    }

    /// Any error, with a session-ending ``PostgresError`` as `.connection` (other errors unchanged).
    func sessionAware(_ error: any Error) -> any Error {
        guard let error = error as? PostgresError else { return error }
        return sessionAware(error) as PostgresError
    }
}
