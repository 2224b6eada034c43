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
        var out: [UInt8] = []
        out.reserveCapacity(256)
        writeCanonical(into: &out)
        return Data(out)
    }

    /// Canonical JSON text as a string.
    public func canonicalString() -> String {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        writeCanonical(into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Human-readable JSON: sorted keys, two-space indent, one member per line.
    public func prettyString() -> String {
        var out: [UInt8] = []
        writePretty(into: &out, indent: 0)
        return String(decoding: out, as: UTF8.self)
    }

    private func writePretty(into out: inout [UInt8], indent: Int) {
        let pad = [UInt8](repeating: 0x20, count: (indent + 1) * 2)
        let closing = [UInt8](repeating: 0x20, count: indent * 2)
        switch self {
        case .array(let items) where !items.isEmpty:
            out.append(contentsOf: "[\n".utf8)
            for (index, item) in items.enumerated() {
                out.append(contentsOf: pad)
                item.writePretty(into: &out, indent: indent + 1)
                out.append(contentsOf: (index == items.count - 1 ? "\n" : ",\n").utf8)
            }
            out.append(contentsOf: closing)
            out.append(UInt8(ascii: "]"))
        case .object(let dict) where !dict.isEmpty:
            out.append(contentsOf: "{\n".utf8)
            let entries = dict.sorted { $0.key < $1.key }
            for (index, entry) in entries.enumerated() {
                out.append(contentsOf: pad)
                JSONValue.writeString(entry.key, into: &out)
                out.append(contentsOf: ": ".utf8)
                entry.value.writePretty(into: &out, indent: indent + 1)
                out.append(contentsOf: (index == entries.count - 1 ? "\n" : ",\n").utf8)
            }
            out.append(contentsOf: closing)
            out.append(UInt8(ascii: "}"))
        default:
            writeCanonical(into: &out)
        }
    }

    private func writeCanonical(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d): out.append(contentsOf: (d.isFinite ? "\(d)" : "null").utf8)
        case .string(let s): JSONValue.writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                item.writeCanonical(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let dict):
            out.append(UInt8(ascii: "{"))
            var first = true
            for entry in dict.sorted(by: { $0.key < $1.key }) {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                JSONValue.writeString(entry.key, into: &out)
                out.append(UInt8(ascii: ":"))
                entry.value.writeCanonical(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Writes a JSON string literal, escaping only what JSON requires (bytes ≥ 0x80 pass through as UTF-8).
    private static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            var runStart = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
                if runStart < index { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index])) }
                runStart = index + 1
                switch byte {
                case 0x22: out.append(contentsOf: "\\\"".utf8)
                case 0x5C: out.append(contentsOf: "\\\\".utf8)
                case 0x0A: out.append(contentsOf: "\\n".utf8)
                case 0x0D: out.append(contentsOf: "\\r".utf8)
                case 0x09: out.append(contentsOf: "\\t".utf8)
                default:
                    out.append(contentsOf: "\\u00".utf8)
                    out.append(hexDigits[Int(byte >> 4)])
                    out.append(hexDigits[Int(byte & 0xF)])
                }
            }
            if runStart < bytes.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count])) }
        }
        out.append(UInt8(ascii: "\""))
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
