/// Writes canonical JSON text (the text of ``JSONValue/canonicalString()``) straight from a
/// value's fields, without building a ``JSONValue`` tree and sorting its keys.
///
/// The caller writes each object's members in canonical order: by key, in UTF-8 byte order.
/// Debug builds check that order (and the nesting) and stop on a mistake, so a test that
/// compares the output with `canonicalString()` catches a misplaced key.
///
/// ```swift
/// var writer = CanonicalJSONWriter()
/// writer.beginObject()
/// writer.key("asOf"); writer.timestamp(1_700_000_000_000)
/// writer.key("total"); writer.int(10)
/// writer.endObject()
/// writer.text   // {"asOf":"2023-11-14T22:13:20.000Z","total":10}
/// ```
public struct CanonicalJSONWriter {
    /// The text so far, as UTF-8.
    public private(set) var bytes: [UInt8] = []
    /// How many objects and arrays are open (at most 64).
    private var depth = 0
    /// Bit `i` set: the container open at depth `i + 1` has no member yet.
    private var emptyBits: UInt64 = 0
    #if DEBUG
    /// Whether each open container is an object (innermost last).
    private var objects: [Bool] = []
    /// The last key written in each open container (empty: none yet).
    private var lastKeys: [[UInt8]] = []
    /// A key was written and its value not yet.
    private var awaitingValue = false
    #endif

    /// An empty writer with room for `capacity` bytes.
    public init(capacity: Int = 1_024) { bytes.reserveCapacity(capacity) }

    /// The text written.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Opens an object (`{`).
    public mutating func beginObject() { open(UInt8(ascii: "{")) }
    /// Closes the innermost object (`}`).
    public mutating func endObject() { close(UInt8(ascii: "}")) }
    /// Opens an array (`[`).
    public mutating func beginArray() { open(UInt8(ascii: "[")) }
    /// Closes the innermost array (`]`).
    public mutating func endArray() { close(UInt8(ascii: "]")) }

    /// Writes the next member's key; keys must come in byte order within an object.
    public mutating func key(_ name: StaticString) {
        let utf8 = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        #if DEBUG
        precondition(objects.last == true, "CanonicalJSONWriter: key \(name) outside an object")
        precondition(!awaitingValue, "CanonicalJSONWriter: key \(name) after a key without a value")
        let previous = lastKeys[lastKeys.count - 1]
        precondition(previous.isEmpty || previous.lexicographicallyPrecedes(utf8), "CanonicalJSONWriter: key \(name) out of order")
        lastKeys[lastKeys.count - 1] = Array(utf8)
        awaitingValue = true
        #endif
        comma()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: utf8)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        // The member's value follows without a comma.
        emptyBits |= 1 << UInt64(depth - 1)
    }

    /// Writes a string.
    public mutating func string(_ value: String) { separate(); JSONValue.writeString(value, into: &bytes) }
    /// Writes a string, or `null`.
    public mutating func string(_ value: String?) { if let value { string(value) } else { null() } }
    /// Writes an integer.
    public mutating func int(_ value: Int64) { separate(); JSONValue.writeDecimal(value, into: &bytes) }
    /// Writes an integer, or `null`.
    public mutating func int(_ value: Int64?) { if let value { int(value) } else { null() } }
    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) { separate(); bytes.append(contentsOf: (value ? "true" : "false").utf8) }
    /// Writes `null`.
    public mutating func null() { separate(); bytes.append(contentsOf: "null".utf8) }
    /// Writes epoch milliseconds as ISO 8601 text (``JSONValue/timestamp(_:)``), or `null`.
    public mutating func timestamp(_ millis: EpochMillis?) {
        guard let millis else { return null() }
        separate()
        bytes.append(UInt8(ascii: "\""))
        Timestamp.appendISO8601(millis, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }
    /// Writes any value canonically.
    public mutating func value(_ value: JSONValue) { separate(); value.writeCanonical(into: &bytes) }
    /// Writes an array of strings.
    public mutating func strings(_ values: [String]) {
        beginArray()
        for value in values { string(value) }
        endArray()
    }

    // MARK: Internals

    private mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        precondition(depth < 64, "CanonicalJSONWriter: more than 64 levels")
        emptyBits |= 1 << UInt64(depth)
        depth += 1
        #if DEBUG
        objects.append(bracket == UInt8(ascii: "{"))
        lastKeys.append([])
        #endif
    }

    private mutating func close(_ bracket: UInt8) {
        #if DEBUG
        precondition(objects.last == (bracket == UInt8(ascii: "}")), "CanonicalJSONWriter: close does not match open")
        precondition(!awaitingValue, "CanonicalJSONWriter: close after a key without a value")
        objects.removeLast()
        lastKeys.removeLast()
        #endif
        precondition(depth > 0, "CanonicalJSONWriter: close without an open")
        depth -= 1
        emptyBits &= ~(1 << UInt64(depth))
        bytes.append(bracket)
    }

    /// Before a value: the comma, and (checked in debug builds) in an object, a key first.
    private mutating func separate() {
        #if DEBUG
        if objects.last == true {
            precondition(awaitingValue, "CanonicalJSONWriter: a value without a key")
            awaitingValue = false
        }
        #endif
        comma()
    }

    /// A comma before every member of an array or object but its first.
    private mutating func comma() {
        guard depth > 0 else { return }
        let bit: UInt64 = 1 << UInt64(depth - 1)
        if emptyBits & bit != 0 {
            emptyBits &= ~bit
        } else {
            bytes.append(UInt8(ascii: ","))
        }
    }
}
