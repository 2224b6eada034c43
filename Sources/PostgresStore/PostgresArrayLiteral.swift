import Foundation
import PostgresClient

/// PostgreSQL array literals (`{…}`) sent as one text parameter and cast in SQL
/// (`JOIN unnest($1::text[]) AS q(v) ON … = q.v`, `unnest($1::bigint[], $2::bytea[])`), so one
/// prepared statement serves a set of any size: a lookup of a thousand ids is one round trip, not
/// a thousand. Lookups join the unnested array instead of `= ANY($1)`: with thousands of values
/// the planner may otherwise scan the table and test every row against the whole array.
enum PostgresArrayLiteral {
    /// `{"a","b\"c"}`: every element double-quoted, `\` and `"` escaped.
    static func texts<S: Sequence>(_ values: S) -> PostgresValue where S.Element == String {
        var buffer: [UInt8] = [UInt8(ascii: "{")]
        var first = true
        for value in values {
            if !first { buffer.append(UInt8(ascii: ",")) }
            first = false
            buffer.append(UInt8(ascii: "\""))
            for byte in value.utf8 {
                if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"") { buffer.append(UInt8(ascii: "\\")) }
                buffer.append(byte)
            }
            buffer.append(UInt8(ascii: "\""))
        }
        buffer.append(UInt8(ascii: "}"))
        return .text(String(decoding: buffer, as: UTF8.self))
    }

    /// `{1,2,3}`.
    static func integers<S: Sequence>(_ values: S) -> PostgresValue where S.Element == Int64 {
        .text("{" + values.map { String($0) }.joined(separator: ",") + "}")
    }

    /// `{"\\x0a1b",…}`: bytea's hex form, its backslash escaped for the array syntax.
    static func byteas<S: Sequence>(_ values: S) -> PostgresValue where S.Element == Data {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var buffer: [UInt8] = [UInt8(ascii: "{")]
        var first = true
        for value in values {
            if !first { buffer.append(UInt8(ascii: ",")) }
            first = false
            buffer.reserveCapacity(buffer.count + value.count * 2 + 6)
            buffer.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "\\"), UInt8(ascii: "x")])
            for byte in value {
                buffer.append(digits[Int(byte >> 4)])
                buffer.append(digits[Int(byte & 0x0F)])
            }
            buffer.append(UInt8(ascii: "\""))
        }
        buffer.append(UInt8(ascii: "}"))
        return .text(String(decoding: buffer, as: UTF8.self))
    }
}
