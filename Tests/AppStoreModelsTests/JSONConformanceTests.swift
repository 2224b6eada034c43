import AppStoreModels
import Foundation
import Testing

/// A conformance corpus for `JSONValue.parse`, written from RFC 8259 (section numbers in each
/// case), plus SeatLedger's own decisions where the RFC leaves a choice: duplicate member names
/// are refused; integers keep their exact Int64 value; nesting is limited.
@Suite("JSON parser conformance (RFC 8259)")
struct JSONConformanceTests {
    /// Texts the grammar allows, with the value they must parse to.
    static let accepted: [(String, JSONValue)] = [
        ("null", .null),                                   // §3 literal names
        ("true", .bool(true)),
        ("false", .bool(false)),
        (" \t\r\n[ ] \n", .array([])),                     // §2 insignificant whitespace: space, tab, LF, CR
        ("{}", .object([:])),
        (#"{"a":1,"b":[true,null]}"#, .object(["a": .int(1), "b": .array([.bool(true), .null])])),   // §4, §5
        ("-0", .int(0)),                                   // §6 minus zero
        ("9223372036854775807", .int(.max)),               // exact at Int64's edges
        ("-9223372036854775808", .int(.min)),
        ("1.5e2", .double(150)),                           // §6 fraction and exponent
        ("1E-2", .double(0.01)),
        (#""\u00e9\n\/\\\"""#, .string("é\n/\\\"")),       // §7 escapes
        (#""\ud83d\ude00""#, .string("😀")),               // §7 a surrogate pair is one character
        ("\"é😀\"", .string("é😀")),                      // §8.1 UTF-8 text
    ]

    /// Texts the grammar refuses (or SeatLedger refuses by decision), with the reason.
    static let refused: [(String, String)] = [
        ("", "§2 a JSON text is a value"),
        ("nul", "§3 only the three literal names"),
        ("True", "§3 literal names are lower-case"),
        ("[1,]", "§5 no trailing comma"),
        (#"{"a":1,}"#, "§4 no trailing comma"),
        (#"{a:1}"#, "§4 names are strings"),
        (#"{"a" 1}"#, "§4 a colon separates name and value"),
        ("01", "§6 no leading zeros"),
        ("+1", "§6 no plus sign"),
        (".5", "§6 a digit before the point"),
        ("1.", "§6 a digit after the point"),
        ("1e", "§6 digits in the exponent"),
        ("NaN", "§6 no NaN"),
        ("Infinity", "§6 no infinity"),
        ("\"\u{01}\"", "§7 control characters must be escaped"),
        (#""\x41""#, "§7 only the listed escapes"),
        (#""\u12""#, "§7 four hex digits"),
        ("\"abc", "§7 strings end with a quotation mark"),
        ("[1] [2]", "§2 one value per text"),
        ("\u{FEFF}{}", "§8.1 no byte order mark"),
        (#"{"alg":"none","alg":"ES256"}"#, "decision: a repeated member name is refused (RFC 7515 §4)"),
        (#"{"a":{"b":1,"b":2}}"#, "decision: a repeated name is refused at any depth"),
        ("9223372036854775808", "decision: an integer past Int64 is not silently rounded"),
    ]

    @Test("accepts what RFC 8259 allows, with the exact value", arguments: accepted)
    func accepts(_ text: String, _ expected: JSONValue) throws {
        #expect(try JSONValue.parse(text) == expected)
    }

    @Test("refuses what RFC 8259 (or a SeatLedger decision) refuses", arguments: refused)
    func refuses(_ text: String, _ reason: String) {
        #expect(throws: JSONParseError.self, "\(reason)") { try JSONValue.parse(text) }
    }

    @Test("invalid UTF-8 is refused (§8.1)", arguments: [[0x22, 0xC3, 0x28, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xFF, 0x22]] as [[UInt8]])
    func invalidUTF8(_ bytes: [UInt8]) {
        #expect(throws: JSONParseError.self) { try JSONValue.parse(bytes: bytes) }
    }

    @Test("a duplicate name's error names it")
    func duplicateNameNamed() {
        let error = #expect(throws: JSONParseError.self) { try JSONValue.parse(#"{"alg":"none","alg":"ES256"}"#) }
        #expect(error?.reason.contains(#"duplicate member name "alg""#) == true, "\(String(describing: error))")
    }
}
