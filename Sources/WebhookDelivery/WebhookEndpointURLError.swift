/// Why a text is not an acceptable webhook endpoint URL. The description names the URL (any user
/// name and password cut out) and the reason:
/// `http://example.com/x: plain http is allowed only to a loopback address with --allow-http-loopback`.
public struct WebhookEndpointURLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with the URL.
    public enum Reason: Sendable, Equatable {
        /// The text does not parse as a URL (empty, spaces, bad characters …).
        case notAURL
        /// The URL has no scheme (`example.com/hook`).
        case missingScheme
        /// The scheme is neither `https` nor `http` (the scheme, lowercased).
        case unsupportedScheme(String)
        /// The URL has no host (`https:///hook`).
        case missingHost
        /// The URL carries a user name or password (`https://user:pass@host/`).
        case userInfo
        /// The URL has a fragment (`#…`), which is never sent.
        case fragment
        /// Plain `http` to a host that is not loopback, or to a loopback host without
        /// `allowsLoopbackHTTP` (`--allow-http-loopback`).
        case plainHTTP

        /// The reason in words.
        public var text: String {
            switch self {
            case .notAURL: "not a URL"
            case .missingScheme: "no scheme: use https://"
            case let .unsupportedScheme(scheme): "scheme \(scheme) is not supported: use https"
            case .missingHost: "no host"
            case .userInfo: "a user name or password in the URL is not allowed"
            case .fragment: "a fragment (#…) is not allowed"
            case .plainHTTP: "plain http is allowed only to a loopback address with --allow-http-loopback"
            }
        }
    }

    /// The URL as given, with any user name and password cut out.
    public let url: String
    /// What is wrong.
    public let reason: Reason

    /// An error for `url` (already redacted: see ``redacted(_:)``) and `reason`.
    public init(url: String, reason: Reason) {
        self.url = url
        self.reason = reason
    }

    /// `<url>: <reason>`.
    public var description: String { "\(url): \(reason.text)" }

    /// `text` with the user information of its authority (everything up to the last `@` between
    /// `://` and the first `/`, `?` or `#`) cut out: `https://u:p@host/x` → `https://host/x`.
    public static func redacted(_ text: String) -> String {
        guard let separator = text.range(of: "://") else {
            // No authority marker: cut anything before an `@` that precedes the first `/`.
            let head = text.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            guard let at = head.lastIndex(of: "@") else { return text }
            return String(text[text.index(after: at)...])
        }
        let rest = text[separator.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard let at = authority.lastIndex(of: "@") else { return text }
        return String(text[..<separator.upperBound]) + String(text[text.index(after: at)...])
    }
}
