extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral, ExpressibleByFloatLiteral {
    /// `.string` of a string literal.
    public init(stringLiteral value: String) { self = .string(value) }
    /// `.int` of an integer literal.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// `.bool` of `true` or `false`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// `.array` of an array literal.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// `.object` of a dictionary literal; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    /// `.null` for `nil`.
    public init(nilLiteral: ()) { self = .null }
    /// `.double` of a floating-point literal.
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension JSONValue {
    /// `.string` or `.null`.
    public static func optional(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
    /// `.int` or `.null`.
    public static func optional(_ value: Int64?) -> JSONValue { value.map(JSONValue.int) ?? .null }
    /// An ISO 8601 string for epoch milliseconds, or `.null`.
    public static func timestamp(_ millis: EpochMillis?) -> JSONValue { millis.map { .string(Timestamp.iso8601($0)) } ?? .null }
    /// `.int` of an `Int`.
    public static func count(_ value: Int) -> JSONValue { .int(Int64(value)) }
}
