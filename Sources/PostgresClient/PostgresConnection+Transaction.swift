import CLibPQ

extension PostgresConnection {
    /// Runs `body` inside `BEGIN … COMMIT`; an error thrown by `body` rolls back and is rethrown.
    ///
    /// A failed COMMIT (e.g. `40001` under SERIALIZABLE) is thrown; the transaction is then gone.
    /// If `body` caught a server error and carried on, the transaction is aborted: it is rolled back
    /// and a `25P02` error is thrown instead of letting COMMIT silently turn into ROLLBACK.
    /// A `.connection` error from COMMIT leaves the outcome unknown (it may have committed): make
    /// the work idempotent and check. Transactions do not nest: calling this inside one throws `.usage`.
    @discardableResult
    public func transaction<T>(isolation: PostgresIsolationLevel = .readCommitted, readOnly: Bool = false,
                               _ body: () throws -> T) throws -> T {
        guard !isInTransaction else {
            throw PostgresError(kind: .usage, message: "transaction() called inside an open transaction; transactions do not nest")
        }
        try execute("BEGIN ISOLATION LEVEL \(isolation.rawValue)" + (readOnly ? " READ ONLY" : ""))
        let value: T
        do {
            value = try body()
        } catch {
            rollbackQuietly()
            throw error
        }
        if isTransactionAborted {
            rollbackQuietly()
            throw PostgresError(kind: .server, sqlState: "25P02",
                                message: "the transaction was aborted by an error inside it that was caught; it was rolled back, not committed",
                                sql: "COMMIT")
        }
        let commit = try query("COMMIT")
        // COMMIT of an aborted transaction "succeeds" with the tag ROLLBACK; never report that as a commit.
        guard commit.commandTag == "COMMIT" else {
            throw PostgresError(kind: .server, sqlState: "40000", message: "COMMIT answered \(commit.commandTag): the transaction was rolled back",
                                sql: "COMMIT")
        }
        return value
    }

    /// Rolls back the open transaction, ignoring failures (a lost connection has nothing to roll back).
    func rollbackQuietly() {
        guard isConnected, isInTransaction else { return }
        _ = try? execute("ROLLBACK")
    }
}
