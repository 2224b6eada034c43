import AppStoreModels
import Testing

@Suite("JSONValue pretty form, element by element")
struct PrettyPrintTests {
    /// `groups --json` prints its array one element at a time with `prettyString(indent: 1)`;
    /// the bytes must be those of the whole array's `prettyString()`.
    @Test("an array printed element by element is the whole array's pretty form", arguments: [0, 1, 3])
    func elementByElement(count: Int) throws {
        let items: [JSONValue] = (0..<count).map { index in
            .object(["key": .string("g\(index)"), "members": .array([.object(["ref": .string("ann"), "seats": .int(Int64(index))]), .array([])]),
                     "empty": .object([:]), "note": .null])
        }
        var streamed = ""
        for (index, item) in items.enumerated() { streamed += (index == 0 ? "[\n  " : ",\n  ") + item.prettyString(indent: 1) }
        streamed += items.isEmpty ? "[]" : "\n]"
        #expect(streamed == JSONValue.array(items).prettyString())
        #expect(JSONValue.int(5).prettyString(indent: 2) == "5")
    }

    /// A stored pretty form (a group snapshot) is printed nested without being parsed again.
    @Test("nestingPretty of the indent-0 form is the pretty form written that deep", arguments: [0, 1, 2, 5])
    func nesting(levels: Int) {
        let values: [JSONValue] = [
            .object(["key": .string("line\nbreak \"quoted\" \\ tab\t"), "list": .array([.int(1), .array([]), .object(["a": .null])]),
                     "nested": .object(["deeper": .object(["deepest": .array([.string("é"), .bool(true)])])]), "empty": .object([:])]),
            .array([.string("x"), .object(["y": .double(1.5)])]),
            .string("scalar\n"), .int(-3), .array([]), .object([:]),
        ]
        for value in values {
            #expect(JSONValue.nestingPretty(value.prettyString(), levels: levels) == value.prettyString(indent: levels), "\(value)")
        }
    }
}
