extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral, ExpressibleByFloatLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    public init(nilLiteral: ()) { self = .null }
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
