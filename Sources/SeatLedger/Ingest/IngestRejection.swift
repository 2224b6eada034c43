/// Why an input was refused; it goes to quarantine with its raw bytes.
public struct IngestRejection: Error, Sendable, Equatable, CustomStringConvertible {
    /// Machine code, stable for scripts: `bad_signature`, `bundle_mismatch`, `malformed_json` …
    public let code: String
    /// Human reason naming what was wrong.
    public let reason: String

    /// Creates a rejection. A NUL character in `reason` (quoting the input) is written `\u0000`:
    /// the reason is stored as text, which cannot hold one on every backend.
    public init(code: String, reason: String) {
        self.code = code
        self.reason = reason.utf8.contains(0) ? reason.replacingOccurrences(of: "\u{0}", with: "\\u0000") : reason
    }

    public var description: String { "\(code): \(reason)" }

    static func malformedJSON(_ detail: String) -> Self { Self(code: "malformed_json", reason: "malformed JSON: \(detail)") }
    static let unrecognized = Self(code: "unrecognized_message",
                                   reason: "JSON object has neither \"signedPayload\" nor \"apiResponse\"")
    static func lineTooLong(_ length: Int, limit: Int) -> Self {
        Self(code: "line_too_long", reason: "line too long: \(length) bytes (limit \(limit))")
    }
    static func bundleMismatch(found: String?, expected: String, at path: String) -> Self {
        Self(code: "bundle_mismatch",
             reason: "bundle mismatch: \(path) names \(found.map { "\"\($0)\"" } ?? "no bundleId"), ledger expects \"\(expected)\"")
    }
    static func environmentMismatch(found: String?, expected: String, at path: String) -> Self {
        Self(code: "environment_mismatch",
             reason: "environment mismatch: \(path) names \(found.map { "\"\($0)\"" } ?? "no environment"), ledger expects \"\(expected)\"")
    }
}
