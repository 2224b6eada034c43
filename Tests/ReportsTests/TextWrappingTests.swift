import Reports
import Testing

/// Records and prose fit a terminal's width: broken between fields or words, never inside one,
/// continuation lines indented; without a width, one line as before.
@Suite("Text that fits the terminal")
struct TextWrappingTests {
    static let record = ["#12", "occurred 2026-10-02T10:00:00.000Z", "recorded 2026-10-02T10:00:05.000Z", "notification",
                         "DID_RENEW", "7a0c2a3e-0d6b-4a53-9a59-3c1f0c7d9a01"]

    @Test("fields: each line within the width, every field whole and in order, continuations indented", arguments: [20, 40, 60, 80, 200])
    func fields(width: Int) {
        let text = TextTable.fields(Self.record, maxWidth: width)
        let lines = text.split(separator: "\n").map(String.init)
        for line in lines {
            let pieces = line.trimmingPrefix(while: { $0 == " " }).components(separatedBy: "  ")
            #expect(line.count <= width || pieces.count == 1, "\"\(line)\" is wider than \(width) with more than one field")
        }
        #expect(lines.dropFirst().allSatisfy { $0.hasPrefix("    ") && !$0.hasPrefix("     ") })
        let rejoined = lines.map { String($0.trimmingPrefix(while: { $0 == " " })) }.joined(separator: "  ")
        #expect(rejoined == Self.record.joined(separator: "  "))
        #expect(lines.count == (Self.record.joined(separator: "  ").count <= width ? 1 : lines.count))
        #expect(width >= 200 ? lines.count == 1 : lines.count > 1)
    }

    @Test("without a width a record is one line, empty fields left out")
    func noWidth() {
        #expect(TextTable.fields(["a", "", "b"]) == "a  b")
        #expect(TextTable.fields(Self.record) == Self.record.joined(separator: "  "))
    }

    @Test("words: wrapped at spaces, the leading indent kept, a word longer than the width alone on its line")
    func words() {
        let text = "    signature does not verify against the configured root (AppleRootCA-G3, 63343abf…)  (8124 bytes kept)"
        let wrapped = TextTable.words(text, maxWidth: 40, indent: 6)
        let lines = wrapped.split(separator: "\n").map(String.init)
        #expect(lines.count > 2)
        #expect(lines[0].hasPrefix("    signature"))
        #expect(lines.dropFirst().allSatisfy { $0.hasPrefix("      ") })
        #expect(lines.allSatisfy { $0.count <= 40 })
        #expect(lines.map { $0.split(separator: " ").joined(separator: " ") }.joined(separator: " ")
                == text.split(separator: " ").joined(separator: " "))
        let long = String(repeating: "x", count: 50)
        #expect(TextTable.words("a \(long) b", maxWidth: 20) == "a\n    \(long)\n    b")
        #expect(TextTable.words(text) == text)
        #expect(TextTable.words("short", maxWidth: 40) == "short")
    }
}
