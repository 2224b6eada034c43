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
    /// JSON `null`.
    case null
    /// JSON `true` or `false`.
    case bool(Bool)
    /// An integral number that fits in 64 bits.
    case int(Int64)
    /// Any other number.
    case double(Double)
    /// A JSON string.
    case string(String)
    /// A JSON array, in order.
    case array([JSONValue])
    /// A JSON object by member name (the parser refuses duplicate names).
    case object([String: JSONValue])

    /// Parses JSON text (RFC 8259); the error names the byte offset and what was expected.
    public static func parse(_ data: Data) throws(JSONParseError) -> JSONValue {
        try JSONTextParser.parse([UInt8](data))
    }

    /// Parses JSON from raw UTF-8 bytes.
    public static func parse(bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        try JSONTextParser.parse(bytes)
    }

    /// Parses JSON text given as a string.
    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try JSONTextParser.parse(Array(text.utf8))
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
        case .double(let d): return Int64(exactly: d)  // nil for fractions, ±infinity, NaN and |d| ≥ 2^63
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

    /// Canonical JSON text of this value with the object members at `paths` left out (each path
    /// is the member names from the root, e.g. `["notification", "data", "signedRenewalInfo"]`):
    /// the same text as `canonicalString()` of a copy with those members removed, without copying.
    /// Paths only descend through objects; a path that does not exist omits nothing.
    public func canonicalString(omitting paths: [[String]]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        writeCanonical(into: &out, omitting: paths.filter { !$0.isEmpty })
        return String(decoding: out, as: UTF8.self)
    }

    /// Human-readable JSON: sorted keys, two-space indent, one member per line.
    public func prettyString() -> String { prettyString(indent: 0) }

    /// The pretty form as it appears nested `indent` levels deep (two spaces a level, the first
    /// line not indented), so a long array can be printed one element at a time.
    public func prettyString(indent: Int) -> String {
        var out: [UInt8] = []
        writePretty(into: &out, indent: max(0, indent))
        return String(decoding: out, as: UTF8.self)
    }

    /// `text`, a pretty form written at indent 0 (``prettyString()``), as ``prettyString(indent:)``
    /// writes it `levels` deep: two spaces a level after every line break (a string value holds
    /// none: line breaks in strings are escaped). A stored pretty form is printed nested this way
    /// without being parsed (the `groups --json` listing prints stored group snapshots).
    public static func nestingPretty(_ text: String, levels: Int) -> String {
        guard levels > 0 else { return text }
        let pad = [UInt8](repeating: 0x20, count: levels * 2)
        var out: [UInt8] = []
        var text = text
        text.withUTF8 { bytes in
            out.reserveCapacity(bytes.count + bytes.count / 16 * pad.count)
            var start = 0
            for index in bytes.indices where bytes[index] == 0x0A {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...index]))
                out.append(contentsOf: pad)
                start = index + 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Writes the value pretty-printed at `indent` levels. Members in ``sortedMembers(_:)``'s
    /// order, indentation appended in place, with no padding arrays per value and no sorted copy
    /// of each object: a listing prints this for every group without a snapshot.
    private func writePretty(into out: inout [UInt8], indent: Int) {
        switch self {
        case .array(let items) where !items.isEmpty:
            out.append(contentsOf: "[\n".utf8)
            for (index, item) in items.enumerated() {
                Self.writeIndent(indent + 1, into: &out)
                item.writePretty(into: &out, indent: indent + 1)
                out.append(contentsOf: (index == items.count - 1 ? "\n" : ",\n").utf8)
            }
            Self.writeIndent(indent, into: &out)
            out.append(UInt8(ascii: "]"))
        case .object(let dict) where !dict.isEmpty:
            out.append(contentsOf: "{\n".utf8)
            let members = JSONValue.sortedMembers(dict)
            for (position, index) in members.enumerated() {
                Self.writeIndent(indent + 1, into: &out)
                JSONValue.writeString(dict[index].key, into: &out)
                out.append(contentsOf: ": ".utf8)
                dict[index].value.writePretty(into: &out, indent: indent + 1)
                out.append(contentsOf: (position == members.count - 1 ? "\n" : ",\n").utf8)
            }
            Self.writeIndent(indent, into: &out)
            out.append(UInt8(ascii: "}"))
        default:
            writeCanonical(into: &out)
        }
    }

    /// Appends this value as ``prettyString(indent:)`` writes it `indent` levels deep (for
    /// writers that lay out a known object themselves and write its values with this).
    public func appendPretty(to out: inout [UInt8], indent: Int) {
        writePretty(into: &out, indent: indent)
    }

    /// Appends `s` as a JSON string literal, escaped as every writer here escapes it.
    public static func appendString(_ s: String, to out: inout [UInt8]) {
        writeString(s, into: &out)
    }

    /// Two spaces per level.
    private static func writeIndent(_ levels: Int, into out: inout [UInt8]) {
        for _ in 0..<levels * 2 { out.append(0x20) }
    }

    private func writeCanonical(into out: inout [UInt8], omitting paths: [[String]]) {
        guard !paths.isEmpty, case .object(let dict) = self else {
            writeCanonical(into: &out)
            return
        }
        out.append(UInt8(ascii: "{"))
        var first = true
        for index in JSONValue.sortedMembers(dict) {
            let entry = dict[index]
            var below: [[String]] = []
            var omitted = false
            for path in paths where path[0] == entry.key {
                if path.count == 1 { omitted = true } else { below.append(Array(path.dropFirst())) }
            }
            if omitted { continue }
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            JSONValue.writeString(entry.key, into: &out)
            out.append(UInt8(ascii: ":"))
            entry.value.writeCanonical(into: &out, omitting: below)
        }
        out.append(UInt8(ascii: "}"))
    }

    func writeCanonical(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): JSONValue.writeDecimal(i, into: &out)
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
            for index in JSONValue.sortedMembers(dict) {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                JSONValue.writeString(dict[index].key, into: &out)
                out.append(UInt8(ascii: ":"))
                dict[index].value.writeCanonical(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The positions of an object's members sorted by key, as `String`'s `<` orders them.
    ///
    /// When every key is ASCII (App Store payloads), `<` is plain byte order: the members are
    /// sorted by the first sixteen bytes of their keys packed into two integers, and only keys
    /// sharing those bytes are compared in full; otherwise `<` is used. Sorting positions rather
    /// than members copies no key or value.
    static func sortedMembers(_ dict: [String: JSONValue]) -> [Dictionary<String, JSONValue>.Index] {
        var entries: [(high: UInt64, low: UInt64, index: Dictionary<String, JSONValue>.Index)] = []
        entries.reserveCapacity(dict.count)
        var ascii = true
        var index = dict.startIndex
        while index != dict.endIndex {
            if ascii, let prefix = asciiPrefix(dict[index].key) {
                entries.append((prefix.high, prefix.low, index))
            } else {
                ascii = false
                entries.append((0, 0, index))
            }
            dict.formIndex(after: &index)
        }
        if entries.count < 2 { return entries.map(\.index) }
        if ascii {
            entries.sort { a, b in
                if a.high != b.high { return a.high < b.high }
                if a.low != b.low { return a.low < b.low }
                return asciiLess(dict[a.index].key, dict[b.index].key)
            }
        } else {
            entries.sort { dict[$0.index].key < dict[$1.index].key }
        }
        return entries.map(\.index)
    }

    /// The first sixteen UTF-8 bytes of an ASCII `text`, big-endian, zero-padded (so integer
    /// order is byte order of those bytes); `nil` if `text` is not ASCII.
    private static func asciiPrefix(_ text: String) -> (high: UInt64, low: UInt64)? {
        text.utf8.withContiguousStorageIfAvailable { utf8 -> (high: UInt64, low: UInt64)? in
            var high: UInt64 = 0, low: UInt64 = 0
            for (offset, byte) in utf8.enumerated() {
                if byte >= 0x80 { return nil }
                if offset < 8 {
                    high |= UInt64(byte) << UInt64(56 - 8 * offset)
                } else if offset < 16 {
                    low |= UInt64(byte) << UInt64(56 - 8 * (offset - 8))
                }
            }
            return (high, low)
        } ?? nil
    }

    /// Byte order of two ASCII strings (equal to `<` for ASCII).
    private static func asciiLess(_ a: String, _ b: String) -> Bool {
        let ordered = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y -> Bool in
                let common = min(x.count, y.count)
                for index in 0..<common where x[index] != y[index] { return x[index] < y[index] }
                return x.count < y.count
            }
        }
        return (ordered ?? nil) ?? (a < b)
    }

    /// How many leading bytes of `utf8` a JSON string literal could hold verbatim: the index of
    /// the first quote, backslash or control character, or the whole count when there is none.
    public static func plainPrefixLength(_ utf8: UnsafeBufferPointer<UInt8>) -> Int {
        JSONTextParser.plainRunEnd(utf8, from: 0)
    }

    /// Whether `utf8` is well-formed UTF-8 (what the parser requires of every string and name).
    public static func isValidUTF8(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        JSONTextParser.isValidUTF8(utf8)
    }

    /// Writes the decimal digits of `value` (what `String(value)` renders).
    static func writeDecimal(_ value: Int64, into out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        // The magnitude as UInt64, so Int64.min needs no special case.
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 20 digits
        withUnsafeMutableBytes(of: &digits) { buffer in
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }

    /// Writes a JSON string literal, escaping only what JSON requires (bytes ≥ 0x80 pass through as UTF-8).
    static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            // Most strings need no escape at all: find the first byte that does, a word at a time.
            let plain = JSONTextParser.plainRunEnd(bytes, from: 0)
            if plain == bytes.count {
                out.append(contentsOf: bytes)
                return
            }
            var runStart = 0
            for index in plain..<bytes.count {
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
    /// The reason, prefixed with `malformed JSON:`.
    public var description: String { "malformed JSON: \(reason)" }
}
