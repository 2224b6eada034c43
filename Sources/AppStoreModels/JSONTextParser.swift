/// A strict, allocation-light JSON parser over UTF-8 bytes.
///
/// Written instead of `JSONSerialization` so integers stay exact `Int64`, booleans are never
/// confused with numbers, and errors carry the byte offset. Nesting is limited to 512 levels so a
/// hostile input cannot exhaust the stack.
struct JSONTextParser {
    /// The input, borrowed for the duration of ``parse(_:)``.
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var depth = 0
    private static let maxDepth = 512

    private init(buffer: UnsafeBufferPointer<UInt8>) { self.bytes = buffer }

    /// Parses one JSON document from UTF-8 bytes.
    static func parse(_ input: [UInt8]) throws(JSONParseError) -> JSONValue {
        let result = input.withUnsafeBufferPointer { buffer in
            Result { () throws(JSONParseError) -> JSONValue in
                var parser = JSONTextParser(buffer: buffer)
                return try parser.parseDocument()
            }
        }
        return try result.get()
    }

    private mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw fail("unexpected data after the JSON value") }
        return value
    }

    private func fail(_ what: String) -> JSONParseError {
        if index >= bytes.count { return JSONParseError(reason: "\(what) at end of input (byte \(index))") }
        return JSONParseError(reason: "\(what) at byte \(index)")
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue() throws(JSONParseError) -> JSONValue {
        guard index < bytes.count else { throw fail("expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(pruning: nil)
        case UInt8(ascii: "["): return try parseArray(pruning: nil)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected character '\(Character(Unicode.Scalar(bytes[index])))'")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw fail("truncated literal") }
        let ok = literal.withUTF8Buffer { buffer in
            for offset in 0..<count where bytes[index + offset] != buffer[offset] { return false }
            return true
        }
        guard ok else { throw fail("invalid literal") }
        index += count
    }

    private mutating func enter() throws(JSONParseError) {
        depth += 1
        if depth > Self.maxDepth { throw fail("nesting deeper than \(Self.maxDepth)") }
    }

    /// The first index from `start` holding a quote, a backslash or a control character (or the
    /// end): eight bytes at a time, testing each word for any such byte without branching per byte.
    private func plainRunEnd(from start: Int) -> Int {
        Self.plainRunEnd(bytes, from: start)
    }

    /// The first index of `bytes` from `start` holding a quote, a backslash or a control
    /// character, or `bytes.count` when there is none (shared with the canonical writer).
    static func plainRunEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var i = start
        let count = bytes.count
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            while i + 8 <= count {
                let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                let quote = word ^ (ones &* 0x22), backslash = word ^ (ones &* 0x5C)
                // Classic "has a zero byte" / "has a byte below n" tests: exact about presence.
                let found = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word)
                if found & highs != 0 { break }
                i += 8
            }
        }
        while i < count {
            let byte = bytes[i]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            i += 1
        }
        return i
    }

    private mutating func parseString() throws(JSONParseError) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes.
        index = plainRunEnd(from: index)
        if index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let run = UnsafeBufferPointer(rebasing: bytes[start..<index])
                guard Self.isValidUTF8(run) else { throw fail("invalid UTF-8 in string") }
                let text = String(decoding: run, as: UTF8.self)
                index += 1
                return text
            }
            if byte < 0x20 { throw fail("control character in string") }
        }
        var scalars = Array(bytes[start..<index])
        // Escapes only ever add whole, valid sequences; raw bytes at or above 0x80 need checking.
        var sawNonASCII = Self.containsNonASCII(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                if sawNonASCII {
                    let valid = scalars.withUnsafeBufferPointer { Self.isValidUTF8($0) }
                    guard valid else { throw fail("invalid UTF-8 in string") }
                }
                index += 1
                return String(decoding: scalars, as: UTF8.self)
            }
            if byte < 0x20 { throw fail("control character in string") }
            if byte != UInt8(ascii: "\\") {
                if byte >= 0x80 { sawNonASCII = true }
                scalars.append(byte)
                index += 1
                continue
            }
            index += 1
            guard index < bytes.count else { break }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append(0x22)
            case UInt8(ascii: "\\"): scalars.append(0x5C)
            case UInt8(ascii: "/"): scalars.append(0x2F)
            case UInt8(ascii: "b"): scalars.append(0x08)
            case UInt8(ascii: "f"): scalars.append(0x0C)
            case UInt8(ascii: "n"): scalars.append(0x0A)
            case UInt8(ascii: "r"): scalars.append(0x0D)
            case UInt8(ascii: "t"): scalars.append(0x09)
            case UInt8(ascii: "u"):
                var code = try parseHex4()
                if (0xD800...0xDBFF).contains(code) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                    else { throw fail("unpaired surrogate") }
                    index += 2
                    let low = try parseHex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw fail("invalid low surrogate") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(code) {
                    throw fail("unpaired surrogate")
                }
                guard let scalar = Unicode.Scalar(code) else { throw fail("invalid unicode escape") }
                scalars.append(contentsOf: Array(String(Character(scalar)).utf8))
            default:
                throw fail("invalid escape")
            }
        }
        throw fail("unterminated string")
    }

    /// Whether `run` holds a byte at or above 0x80 (eight bytes at a time).
    static func containsNonASCII(_ run: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        let count = run.count
        if let base = run.baseAddress {
            let raw = UnsafeRawPointer(base)
            while i + 8 <= count {
                if raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return true }
                i += 8
            }
        }
        while i < count {
            if run[i] >= 0x80 { return true }
            i += 1
        }
        return false
    }

    /// Whether `run` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
    /// above U+10FFFF, no truncated sequence). Plain ASCII is skipped eight bytes at a time, so
    /// the common all-ASCII string costs one pass of word loads.
    static func isValidUTF8(_ run: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        let count = run.count
        guard let base = run.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        while i < count {
            if i + 8 <= count, raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                i += 8
                continue
            }
            let lead = run[i]
            if lead < 0x80 { i += 1; continue }
            let length: Int
            var low: UInt8 = 0x80, high: UInt8 = 0xBF  // allowed range of the second byte
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return false
            }
            guard i + length <= count else { return false }
            let second = run[i + 1]
            guard second >= low, second <= high else { return false }
            var k = 2
            while k < length {
                guard run[i + k] & 0xC0 == 0x80 else { return false }
                k += 1
            }
            i += length
        }
        return true
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw fail("truncated unicode escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - 0x30)
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - 0x61 + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - 0x41 + 10)
            default: throw fail("invalid hex digit")
            }
            value = value * 16 + digit
            index += 1
        }
        return value
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        var integral = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid fraction") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            integral = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid exponent") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if integral, index - start <= 18 {
            // Up to 18 digits always fit in Int64: accumulate directly (what `Int64(text)` gives).
            var value: Int64 = 0
            var digit = start
            let negative = bytes[start] == UInt8(ascii: "-")
            if negative { digit += 1 }
            while digit < index {
                value = value * 10 + Int64(bytes[digit] - 0x30)
                digit += 1
            }
            return .int(negative ? -value : value)
        }
        // Number text is ASCII digits, sign, '.', 'e' only (checked above).
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if integral {
            // An integer literal is kept exact or refused: rounding it to a Double would make
            // distinct inputs (and their canonical forms, hence event ids) collide.
            guard let exact = Int64(text) else {
                index = start
                let shown = text.count > 32 ? text.prefix(32) + "…" : Substring(text)
                throw fail("integer \(shown) out of range (must fit a signed 64-bit integer)")
            }
            return .int(exact)
        }
        // A literal such as 1e999 overflows to infinity, which has no JSON form to write back.
        guard let double = Double(text), double.isFinite else {
            index = start
            throw fail("number out of range")
        }
        return .double(double)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
}

// MARK: Objects and arrays, whole or pruned (``JSONPruning``)

extension JSONTextParser {
    /// Parses one JSON document, building only what `pruning` keeps (see ``JSONPruning``).
    static func parse(_ buffer: UnsafeBufferPointer<UInt8>, pruning: JSONPruning) throws(JSONParseError) -> JSONValue {
        var parser = JSONTextParser(buffer: buffer)
        parser.skipWhitespace()
        let value = try parser.parseValue(pruning: pruning.rule)
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.fail("unexpected data after the JSON value") }
        return value
    }

    private typealias Rule = JSONPruning.Rule

    private mutating func parseValue(pruning rule: Rule) throws(JSONParseError) -> JSONValue {
        guard index < bytes.count else { throw fail("expected a value") }
        switch (rule, bytes[index]) {
        case (.members, UInt8(ascii: "{")): return try parseObject(pruning: rule)
        case (.items(let item), UInt8(ascii: "[")): return try parseArray(pruning: item)
        default: return try parseValue()
        }
    }

    /// Parses an object; with a `rule`, only the members it names are built (the others are
    /// checked by ``skipValue()``), without one every member is.
    private mutating func parseObject(pruning rule: Rule?) throws(JSONParseError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object([:]) }
        // Members are collected first and the dictionary built at its final size (no rehashing
        // while it grows). A repeated name is refused: RFC 8259 leaves its meaning open, and in a
        // signed payload or JOSE header (`{"alg":"none","alg":"ES256"}`) two readers could take
        // different values (RFC 7515 §4). The pruned parse checks the names it builds; the names it
        // skips were already checked by the whole parse that accepted the text at ingest.
        var pairs: [(String, JSONValue)] = []
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            if let rule {
                let (key, memberRule) = try parseMemberName(rule)
                try expectColon()
                if let memberRule, let key {
                    pairs.append((key, try parseValue(pruning: memberRule)))
                } else {
                    try skipValue()
                }
            } else {
                let key = try parseString()
                try expectColon()
                pairs.append((key, try parseValue()))
            }
            skipWhitespace()
            guard index < bytes.count else { throw fail("unterminated object") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                var members = [String: JSONValue](minimumCapacity: pairs.count)
                for (key, value) in pairs where members.updateValue(value, forKey: key) != nil {
                    throw fail("duplicate member name \"\(key)\"")
                }
                return .object(members)
            }
            throw fail("expected ',' or '}'")
        }
    }

    /// The `:` after a member name, with the blanks around it.
    private mutating func expectColon() throws(JSONParseError) {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
        index += 1
        skipWhitespace()
    }

    /// Reads a member name: the name (only when kept) and the rule of its value (`nil`: left out).
    private mutating func parseMemberName(_ rule: Rule) throws(JSONParseError) -> (String?, Rule?) {
        let opening = index
        let end = plainRunEnd(from: index + 1)
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            // No escapes: the bytes are the name (checked as parseString checks them).
            let run = UnsafeBufferPointer(rebasing: bytes[(opening + 1)..<end])
            guard Self.isValidUTF8(run) else { index = end; throw fail("invalid UTF-8 in string") }
            index = end + 1
            guard let kept = rule.member(run) else { return (nil, nil) }
            return (String(decoding: run, as: UTF8.self), kept)
        }
        let name = try parseString()
        let kept = Array(name.utf8).withUnsafeBufferPointer { rule.member($0) }
        return kept.map { (name, $0) } ?? (nil, nil)
    }

    /// Parses an array, each item pruned by `item` (`nil`: built whole).
    private mutating func parseArray(pruning item: Rule?) throws(JSONParseError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
        while true {
            skipWhitespace()
            if let item { items.append(try parseValue(pruning: item)) } else { items.append(try parseValue()) }
            skipWhitespace()
            guard index < bytes.count else { throw fail("unterminated array") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
            throw fail("expected ',' or ']'")
        }
    }

    /// Checks one value as ``parseValue()`` would, building nothing.
    private mutating func skipValue() throws(JSONParseError) {
        guard index < bytes.count else { throw fail("expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): try skipContainer(closing: UInt8(ascii: "}"), members: true)
        case UInt8(ascii: "["): try skipContainer(closing: UInt8(ascii: "]"), members: false)
        case UInt8(ascii: "\""): try skipString()
        default: _ = try parseValue()  // literals and numbers: nothing to allocate in the usual case
        }
    }

    /// Checks a string as ``parseString()`` would; only a string with escapes is built (and dropped).
    private mutating func skipString() throws(JSONParseError) {
        let opening = index
        let end = plainRunEnd(from: index + 1)
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            guard Self.isValidUTF8(UnsafeBufferPointer(rebasing: bytes[(opening + 1)..<end])) else {
                index = end
                throw fail("invalid UTF-8 in string")
            }
            index = end + 1
            return
        }
        _ = try parseString()
    }

    /// Checks an object (`members`) or an array as ``parseObject()`` / ``parseArray()`` would.
    private mutating func skipContainer(closing: UInt8, members: Bool) throws(JSONParseError) {
        try enter()
        defer { depth -= 1 }
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == closing { index += 1; return }
        while true {
            skipWhitespace()
            if members {
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
                try skipString()
                try expectColon()
            }
            try skipValue()
            skipWhitespace()
            guard index < bytes.count else { throw fail(members ? "unterminated object" : "unterminated array") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == closing { index += 1; return }
            throw fail(members ? "expected ',' or '}'" : "expected ',' or ']'")
        }
    }
}

