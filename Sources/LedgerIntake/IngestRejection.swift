import LedgerEvents
import Reports

/// Why an input was refused; it goes to quarantine with its raw bytes.
public struct IngestRejection: Error, Sendable, Equatable, CustomStringConvertible {
    /// Machine code, stable for scripts: `bad_signature`, `bundle_mismatch`, `malformed_json` …
    public let code: RejectionCode
    /// Human reason naming what was wrong.
    public let reason: String

    /// Creates a rejection. A NUL character in `reason` (quoting the input) is written `\u0000`:
    /// the reason is stored as text, which cannot hold one on every backend.
    public init(code: RejectionCode, reason: String) {
        self.code = code
        self.reason = reason.utf8.contains(0) ? reason.replacingOccurrences(of: "\u{0}", with: "\\u0000") : reason
    }

    /// The text a person reads (what the CLI prints for it).
    public var description: String { "\(code): \(reason)" }

    static func malformedJSON(_ detail: String) -> Self { Self(code: .malformedJSON, reason: "malformed JSON: \(detail)") }
    static let unrecognized = Self(code: .unrecognizedMessage,
                                   reason: "JSON object has none of \"signedPayload\", \"apiResponse\" and \"storeKit\"")
    /// A JSON object that names `signedPayload`, `apiResponse` or `storeKit` but also other members
    /// (two of them, or anything else): not exactly one of the accepted forms, so nothing of it is
    /// applied and it is quarantined whole (`unexpected_members`), members named in the reason.
    static func unexpectedMembers(_ names: some Collection<String>) -> Self {
        let sorted = names.sorted()
        let shown = sorted.prefix(8).map { "\"\(DisplayText.visible(String($0.prefix(40))))\"" }.joined(separator: ", ")
        let more = sorted.count > 8 ? " and \(sorted.count - 8) more" : ""
        return Self(code: .unexpectedMembers,
                    reason: "unexpected members: a JSON object with \(shown)\(more); a message is exactly one of "
                        + "{\"signedPayload\": \"<JWS>\"} (as Apple posts it), a bare JWS, {\"apiResponse\": {…}} or {\"storeKit\": {…}}, "
                        + "so nothing of it was applied")
    }

    /// An NDJSON line (`line_too_long`) or a spool file (`message_too_large`) over the size limit,
    /// kept as its first `kept` bytes; `sha256` is the whole input's digest.
    public static func tooLarge(line: Bool, length: Int, limit: Int, sha256: String, kept: Int) -> Self {
        let what = line ? "line too long" : "message too large"
        let keptNote = kept < length ? "; its first \(kept) bytes are kept" : ""
        return Self(code: line ? .lineTooLong : .messageTooLarge,
                    reason: "\(what): \(length) bytes (limit \(limit)), SHA-256 \(sha256)\(keptNote)")
    }
    /// An `apiResponse` envelope that arrived by a path that applies only Apple-signed notifications.
    static func untrustedAPIResponse(origin: EventOrigin, source: String) -> Self {
        let path = arrivalPath(origin, retryFlag: "--api-responses")
        return Self(code: .untrustedAPIResponse,
                    reason: "untrusted API response: \(source) is an apiResponse envelope (unsigned) that arrived through \(path), "
                        + "which applies only Apple-signed notifications; if you produced it, import it with `seatledger record FILE`, "
                        + "`seatledger ingest --api-responses …` for this source, or `seatledger quarantine retry ID --api-responses`")
    }
    /// How an input with `origin` arrived, in the words a refusal names it (`retryFlag`: the
    /// `quarantine retry` flag that would have applied it).
    static func arrivalPath(_ origin: EventOrigin, retryFlag: String) -> String {
        switch origin {
        case .webhook: return "the webhook (POST /notifications, Ledger.append(notificationBody:))"
        case .spool: return "a spool directory"
        case .queue: return "a queue"
        case .file: return "a file ingest"
        case .stdin: return "stdin"
        case .quarantineRetry: return "a quarantine retry without \(retryFlag) (the quarantine cannot prove which path it came by)"
        default: return "an ingest path with origin \"\(origin.rawValue)\""
        }
    }

    static func bundleMismatch(found: String?, expected: String, at path: String) -> Self {
        Self(code: .bundleMismatch,
             reason: "bundle mismatch: \(path) names \(found.map { "\"\($0)\"" } ?? "no bundleId"), ledger expects \"\(expected)\"")
    }
    static func environmentMismatch(found: String?, expected: String, at path: String) -> Self {
        Self(code: .environmentMismatch,
             reason: "environment mismatch: \(path) names \(found.map { "\"\($0)\"" } ?? "no environment"), ledger expects \"\(expected)\"")
    }
}
