import Foundation

/// A value sent as a query parameter or a COPY field.
public enum PostgresValue: Sendable, Hashable {
    /// SQL NULL.
    case null
    /// A 64-bit integer (binary: `bigint`, OID 20).
    case int64(Int64)
    /// UTF-8 text (type left for the server to infer; must not contain NUL).
    case text(String)
    /// Raw bytes (`bytea`, OID 17).
    case bytea(Data)

    /// `.int64` or `.null`.
    public static func optional(_ value: Int64?) -> PostgresValue { value.map(PostgresValue.int64) ?? .null }
    /// `.text` or `.null`.
    public static func optional(_ value: String?) -> PostgresValue { value.map(PostgresValue.text) ?? .null }
    /// `.bytea` or `.null`.
    public static func optional(_ value: Data?) -> PostgresValue { value.map(PostgresValue.bytea) ?? .null }
}

/// Well-known type OIDs (`pg_type.oid`), fixed since PostgreSQL 7.
enum PostgresTypeOID {
    static let unspecified: UInt32 = 0
    static let bool: UInt32 = 16
    static let bytea: UInt32 = 17
    static let char: UInt32 = 18
    static let name: UInt32 = 19
    static let int8: UInt32 = 20
    static let int2: UInt32 = 21
    static let int4: UInt32 = 23
    static let text: UInt32 = 25
    static let oid: UInt32 = 26
    static let json: UInt32 = 114
    static let unknown: UInt32 = 705
    static let bpchar: UInt32 = 1042
    static let varchar: UInt32 = 1043
    static let jsonb: UInt32 = 3802

    /// Types whose binary representation is their text in the client encoding.
    static let textLike: Set<UInt32> = [char, name, text, json, unknown, bpchar, varchar]
}

/// Hex digits for bytea's text form (`\x0a1b…`).
enum HexDigits {
    static let lowercase: [UInt8] = Array("0123456789abcdef".utf8)
}
