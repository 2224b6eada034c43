/// Text from the log shown to a person: control characters written visibly.
///
/// A `memberRef` (or any string a client put in a recorded envelope) could hold an escape
/// sequence or a line break; printed raw it would recolour a terminal or break a report's lines.
public enum DisplayText {
    /// `text` with every control character (C0, DEL, C1) and bidirectional override (U+202A–202E,
    /// U+2066–2069, which reorder what a terminal shows) written as `\u{1B}`.
    ///
    /// ```swift
    /// DisplayText.visible("a\u{1B}[31mb")  // "a\\u{1B}[31mb"
    /// ```
    public static func visible(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
            || (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }
}
