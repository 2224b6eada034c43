import CLibPQ

/// A failed libpq call: what kind of failure, the server's SQLSTATE and messages, and the SQL.
///
/// One error type for every PostgreSQL failure (like `SQLiteError`), so callers switch on
/// ``sqlState`` (e.g. `23505` unique violation) or ``isConnectionFailure``.
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// Where a failure came from.
    public enum Kind: Sendable, Equatable {
        /// The connection could not be made, or it was lost (server gone, restarted, network).
        case connection
        /// The server refused a statement; ``PostgresError/sqlState`` says why.
        case server
        /// A value in a result could not be read as the requested type.
        case decoding
        /// The client API was used in a way that cannot work (e.g. a nested `transaction`).
        case usage
    }

    /// Where the failure came from.
    public let kind: Kind
    /// The five-character SQLSTATE (e.g. `23505`), when the server sent one.
    public let sqlState: String?
    /// The primary message (the server's, or libpq's for client-side failures).
    public let message: String
    /// The server's DETAIL line, if any.
    public let detail: String?
    /// The server's HINT line, if any.
    public let hint: String?
    /// The constraint that refused the statement, if any.
    public let constraint: String?
    /// The 1-based character position in ``sql`` where the server located the error, if any.
    public let position: Int?
    /// The statement that failed, if any.
    public let sql: String?

    /// Creates an error from its parts.
    public init(kind: Kind, sqlState: String? = nil, message: String, detail: String? = nil, hint: String? = nil,
                constraint: String? = nil, position: Int? = nil, sql: String? = nil) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message
        self.detail = detail
        self.hint = hint
        self.constraint = constraint
        self.position = position
        self.sql = sql
    }

    /// The error a failed `PGresult` describes. It is a `.connection` error when the session is
    /// over: the connection is now bad, the SQLSTATE is a connection exception (class 08), or the
    /// server is terminating the session (57P0x: shutdown, restart, `pg_terminate_backend`) —
    /// libpq may not have marked the connection bad yet when that last result is read.
    init(result: OpaquePointer, connection: OpaquePointer, sql: String?) {
        let sqlState = Self.string(seatledger_pq_sqlstate(result))
        let primary = Self.string(seatledger_pq_message_primary(result))
        let fallback = Self.string(PQresultErrorMessage(result)) ?? Self.string(PQerrorMessage(connection))
        let lost = PQstatus(connection) == CONNECTION_BAD
        let sessionOver = sqlState.map { $0.hasPrefix("08") || $0.hasPrefix("57P0") } ?? false
        self.init(kind: lost || sessionOver ? .connection : .server,
                  sqlState: sqlState,
                  message: primary ?? fallback ?? "unknown libpq error",
                  detail: Self.string(seatledger_pq_message_detail(result)),
                  hint: Self.string(seatledger_pq_message_hint(result)),
                  constraint: Self.string(seatledger_pq_constraint_name(result)),
                  position: Self.string(seatledger_pq_statement_position(result)).flatMap { Int($0) },
                  sql: sql)
    }

    /// The connection's last error (`PQerrorMessage`) as a `.connection` error, or `.server` while still connected.
    init(connection: OpaquePointer, sql: String?) {
        let message = Self.string(PQerrorMessage(connection)) ?? "unknown libpq error"
        let lost = PQstatus(connection) == CONNECTION_BAD
        self.init(kind: lost ? .connection : .server, message: message, sql: sql)
    }

    /// A C string as a trimmed Swift string; `nil` for NULL or empty.
    static func string(_ pointer: UnsafePointer<CChar>?) -> String? {
        guard let pointer else { return nil }
        let text = String(cString: pointer).trimmingTrailingNewlines()
        return text.isEmpty ? nil : text
    }

    /// Whether the connection failed or was lost (reconnect, then retry).
    public var isConnectionFailure: Bool { kind == .connection }

    /// Whether a UNIQUE or PRIMARY KEY constraint refused the statement (`23505`).
    public var isUniqueViolation: Bool { sqlState == "23505" }

    /// Whether a SERIALIZABLE transaction lost a conflict (`40001`); retrying the whole transaction may succeed.
    public var isSerializationFailure: Bool { sqlState == "40001" }

    /// Whether the server broke a deadlock by aborting this transaction (`40P01`).
    public var isDeadlock: Bool { sqlState == "40P01" }

    /// Whether the statement could not take a lock within `lock_timeout` (`55P03`).
    public var isLockNotAvailable: Bool { sqlState == "55P03" }

    /// A one-line summary with SQLSTATE, message, detail and the SQL.
    public var description: String {
        var text = "PostgreSQL \(kind)"
        if let sqlState { text += " error \(sqlState)" } else { text += " error" }
        text += ": \(message)"
        if let detail { text += " (\(detail))" }
        if let hint { text += " [hint: \(hint)]" }
        if let sql { text += " — while executing `\(sql)`" }
        return text
    }
}

extension String {
    /// The string without trailing newlines (libpq messages end with one).
    func trimmingTrailingNewlines() -> String {
        var text = Substring(self)
        while let last = text.last, last == "\n" || last == "\r" { text = text.dropLast() }
        return String(text)
    }
}
