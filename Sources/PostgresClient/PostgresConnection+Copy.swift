import CLibPQ

extension PostgresConnection {
    /// Bulk-loads rows with `COPY table (columns) FROM STDIN`: `body` writes rows to the writer,
    /// which streams them with `PQputCopyData`. Returns the number of rows the server stored.
    ///
    /// All or nothing: if `body` throws, the COPY is cancelled (nothing is stored) and the error
    /// rethrown; a row the server refuses fails the whole COPY with its ``PostgresError``.
    /// `table` may be `schema.table` given as `schema: "…"`; names are quoted as identifiers.
    @discardableResult
    public func copyIn(table: String, schema: String? = nil, columns: [String], format: PostgresFormat = .binary,
                       _ body: (PostgresCopyWriter) throws -> Void) throws -> Int64 {
        guard !columns.isEmpty else {
            throw PostgresError(kind: .usage, message: "copyIn needs at least one column")
        }
        let target = (schema.map { Self.quoteIdentifier($0) + "." } ?? "") + Self.quoteIdentifier(table)
        let sql = "COPY \(target) (\(columns.map(Self.quoteIdentifier).joined(separator: ", "))) FROM STDIN WITH (FORMAT \(format == .binary ? "binary" : "text"))"
        guard let start = PQexec(handle, sql) else { throw PostgresError(connection: handle, sql: sql) }
        guard PQresultStatus(start) == PGRES_COPY_IN else {
            _ = try check(start, sql: sql)  // throws the server's error
            throw PostgresError(kind: .usage, message: "the server did not enter COPY IN", sql: sql)
        }
        PQclear(start)

        let writer = PostgresCopyWriter(connection: self, format: format, columnCount: columns.count, sql: sql)
        do {
            try body(writer)
            try writer.finish()
        } catch {
            writer.abandon()
            // The server answers a client-side COPY failure with 57014 "COPY from stdin failed"; discard it.
            _ = PQputCopyEnd(handle, "cancelled by the client: \(error)")
            drainResults()
            throw error
        }
        guard PQputCopyEnd(handle, nil) == 1 else {
            let error = PostgresError(connection: handle, sql: sql)
            drainResults()
            throw error
        }
        var stored: Int64 = 0
        var failure: PostgresError?
        for _ in 0..<100 {  // bounded: normally one result, then NULL
            guard let result = PQgetResult(handle) else { break }
            if PQresultStatus(result) == PGRES_COMMAND_OK {
                stored = Int64(String(cString: PQcmdTuples(result))) ?? writer.rowCount
                PQclear(result)
            } else if failure == nil {
                do { _ = try check(result, sql: sql) } catch { failure = error }
            } else {
                PQclear(result)
            }
        }
        if let failure { throw failure }
        return stored
    }
}
