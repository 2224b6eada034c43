/// The wire format of parameters, results and COPY data.
public enum PostgresFormat: Int32, Sendable {
    /// PostgreSQL's text representation (works for every type).
    case text = 0
    /// PostgreSQL's binary representation (exact types; bytea without escaping).
    case binary = 1
}
