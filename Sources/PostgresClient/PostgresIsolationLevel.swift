/// A transaction isolation level for ``PostgresConnection/transaction(isolation:readOnly:_:)``.
public enum PostgresIsolationLevel: String, Sendable, CaseIterable {
    /// Each statement sees what was committed before it started (PostgreSQL's default).
    case readCommitted = "READ COMMITTED"
    /// Every statement sees one snapshot taken at the first statement.
    case repeatableRead = "REPEATABLE READ"
    /// As if the transactions ran one after another; conflicts fail with `40001`.
    case serializable = "SERIALIZABLE"
}
