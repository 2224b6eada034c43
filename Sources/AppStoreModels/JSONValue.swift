import Foundation

/// A JSON value that preserves every field and number exactly enough to re-emit what Apple sent.
///
/// Decoded App Store payloads are kept as `JSONValue` so unknown fields survive; typed views
/// (``NotificationPayload``, ``TransactionPayload`` …) read from it.
///
/// ```swift
/// let value = try JSONValue.parse(Data(#"{"quantity": 3}"#.utf8))
/// value["quantity"]?.int64Value   // 3
/// ```
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// An integral number that fits in 64 bits.
    case int(Int64)
    /// Any other number.
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Parses JSON text (RFC 8259); the error names the byte offset and what was expected.
    public static func parse(_ data: Data) throws(JSONParseError) -> JSONValue {
        var parser = JSONTextParser(bytes: [UInt8](data))
        return try parser.parseDocument()
    }

    /// Parses JSON from raw UTF-8 bytes.
    public static func parse(bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        var parser = JSONTextParser(bytes: bytes)
        return try parser.parseDocument()
    }

    /// Parses JSON text given as a string.
    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        var parser = JSONTextParser(bytes: Array(text.utf8))
        return try parser.parseDocument()
    }

    /// The member named `key` of an object, else `nil`.
    public subscript(key: String) -> JSONValue? {
        if case .object(let dict) = self { return dict[key] }
        return nil
    }

    /// The object's members, else `nil`.
    public var objectValue: [String: JSONValue]? {
        if case .object(let dict) = self { return dict }
        return nil
    }

    /// The array's elements, else `nil`.
    public var arrayValue: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    /// A string, or a number rendered as its decimal digits (identifiers arrive both ways).
    public var stringValue: String? {
        switch self {
        case .string(let s): return s
        case .int(let i): return String(i)
        default: return nil
        }
    }

    /// An integer, accepting integral doubles and numeric strings.
    public var int64Value: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.rounded() == d && abs(d) < 9.2e18: return Int64(d)
        case .string(let s): return Int64(s)
        default: return nil
        }
    }

    /// A boolean, else `nil`.
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// Whether this is JSON `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Canonical JSON text: sorted keys, no insignificant whitespace, slashes unescaped.
    ///
    /// Used for the identity of API-response envelopes and for stored decoded columns.
    public func canonicalData() -> Data {
        var out = ""
        writeCanonical(into: &out)
        return Data(out.utf8)
    }

    /// Canonical JSON text as a string.
    public func canonicalString() -> String {
        var out = ""
        writeCanonical(into: &out)
        return out
    }

    /// Human-readable JSON: sorted keys, two-space indent, one member per line.
    public func prettyString() -> String {
        var out = ""
        writePretty(into: &out, indent: 0)
        return out
    }

    private func writePretty(into out: inout String, indent: Int) {
        let pad = String(repeating: "  ", count: indent + 1)
        let closing = String(repeating: "  ", count: indent)
        switch self {
        case .array(let items) where !items.isEmpty:
            out += "[\n"
            for (index, item) in items.enumerated() {
                out += pad
                item.writePretty(into: &out, indent: indent + 1)
                out += index == items.count - 1 ? "\n" : ",\n"
            }
            out += closing + "]"
        case .object(let dict) where !dict.isEmpty:
            out += "{\n"
            let keys = dict.keys.sorted()
            for (index, key) in keys.enumerated() {
                out += pad
                JSONValue.writeString(key, into: &out)
                out += ": "
                dict[key]!.writePretty(into: &out, indent: indent + 1)  // key comes from dict.keys
                out += index == keys.count - 1 ? "\n" : ",\n"
            }
            out += closing + "}"
        default:
            writeCanonical(into: &out)
        }
    }

    private func writeCanonical(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            if d.isFinite { out += "\(d)" } else { out += "null" }
        case .string(let s): JSONValue.writeString(s, into: &out)
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.writeCanonical(into: &out)
            }
            out += "]"
        case .object(let dict):
            out += "{"
            for (index, key) in dict.keys.sorted().enumerated() {
                if index > 0 { out += "," }
                JSONValue.writeString(key, into: &out)
                out += ":"
                dict[key]!.writeCanonical(into: &out)  // key comes from dict.keys
            }
            out += "}"
        }
    }

    private static func writeString(_ s: String, into out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}

/// JSON text that could not be parsed.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What the parser reported.
    public let reason: String
    /// Creates an error with the parser's reason.
    public init(reason: String) { self.reason = reason }
    public var description: String { "malformed JSON: \(reason)" }
}
