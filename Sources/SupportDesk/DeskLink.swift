/// The desk's URLs. Identifiers travel as query parameters, percent-encoded, so any value (a
/// `memberRef` with `/`, `?` or `<` in it) reaches the route intact; a link is HTML-escaped
/// where it is written into a page.
public enum DeskLink {
    /// The search page: `/search?q=…`.
    public static func search(_ query: String, _ clocks: DeskClocks) -> String {
        path("/search", [("q", query)] + clocks.linkParameters)
    }

    /// A group's page: `/group?ref=…`.
    public static func group(_ reference: String, _ clocks: DeskClocks) -> String {
        path("/group", [("ref", reference)] + clocks.linkParameters)
    }

    /// A member's page: `/member?id=…`.
    public static func member(_ identifier: String, _ clocks: DeskClocks) -> String {
        path("/member", [("id", identifier)] + clocks.linkParameters)
    }

    /// A group's report download: `/group/report?ref=…&format=markdown|html|json`.
    public static func groupReport(_ reference: String, format: String, _ clocks: DeskClocks) -> String {
        path("/group/report", [("ref", reference), ("format", format)] + clocks.linkParameters)
    }

    /// A member's report download: `/member/report?id=…&format=markdown|html|json|member-json`.
    public static func memberReport(_ identifier: String, format: String, _ clocks: DeskClocks) -> String {
        path("/member/report", [("id", identifier), ("format", format)] + clocks.linkParameters)
    }

    /// `path?name=value&…`, each name and value percent-encoded.
    public static func path(_ path: String, _ parameters: [(name: String, value: String)]) -> String {
        guard !parameters.isEmpty else { return path }
        return path + "?" + parameters.map { "\(encode($0.name))=\(encode($0.value))" }.joined(separator: "&")
    }

    /// `text` with every byte but the unreserved ones (`A-Z a-z 0-9 - . _ ~`) percent-encoded (UTF-8).
    public static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF")
                out += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 0x0F)])
            }
        }
        return out
    }

    /// A file name for a download made only of `A-Z a-z 0-9 . _ -` (anything else becomes `_`),
    /// so an identifier cannot break the `Content-Disposition` header.
    public static func fileName(_ stem: String, extension ext: String) -> String {
        let safe = String(stem.unicodeScalars.prefix(80).map { scalar -> Character in
            switch scalar {
            case "A"..."Z", "a"..."z", "0"..."9", ".", "_", "-": return Character(scalar)
            default: return "_"
            }
        })
        return "\(safe.isEmpty ? "report" : safe).\(ext)"
    }
}
