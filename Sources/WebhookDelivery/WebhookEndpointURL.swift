import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A webhook endpoint's URL, as `seatledger webhook add` accepts it.
///
/// The rules:
/// - the scheme is `https` (any case);
/// - plain `http` is accepted only when the host is a loopback address (`127.0.0.0/8`, `::1`,
///   `localhost`) **and** the caller passes `allowsLoopbackHTTP: true` (the CLI's
///   `--allow-http-loopback`), for a receiver on the same machine;
/// - the URL has a host, no user name or password (`https://user:pass@host/`) and no fragment
///   (`#…`); a port, a path and a query are fine.
///
/// A refusal is a ``WebhookEndpointURLError`` naming the URL (with any user name and password cut
/// out) and the reason.
///
/// ```swift
/// let endpoint = try WebhookEndpointURL(validating: "https://hooks.example.com/seatledger")
/// let local = try WebhookEndpointURL(validating: "http://127.0.0.1:8080/in", allowsLoopbackHTTP: true)
/// ```
public struct WebhookEndpointURL: Sendable, Hashable, CustomStringConvertible {
    /// The URL, exactly as given (it holds no user name or password).
    public let text: String
    /// The parsed URL.
    public let url: URL
    /// The host, lowercased, without the brackets of an IPv6 literal.
    public let host: String
    /// Whether the host is a loopback address (`127.0.0.0/8`, `::1`, `localhost`).
    public let isLoopback: Bool
    /// Whether the scheme is plain `http` (accepted only to a loopback address, when allowed).
    public let isPlainHTTP: Bool

    /// Validates `text`; throws a ``WebhookEndpointURLError`` naming the URL and the reason.
    ///
    /// - Parameters:
    ///   - text: the URL as the operator typed it.
    ///   - allowsLoopbackHTTP: whether plain `http` to a loopback host is accepted
    ///     (`--allow-http-loopback`); plain `http` elsewhere is refused either way.
    public init(validating text: String, allowsLoopbackHTTP: Bool = false) throws(WebhookEndpointURLError) {
        func refuse(_ reason: WebhookEndpointURLError.Reason) -> WebhookEndpointURLError {
            WebhookEndpointURLError(url: WebhookEndpointURLError.redacted(text), reason: reason)
        }
        guard !text.isEmpty, let components = URLComponents(string: text), let url = components.url else {
            throw refuse(.notAURL)
        }
        guard let scheme = components.scheme?.lowercased(), !scheme.isEmpty else { throw refuse(.missingScheme) }
        guard scheme == "https" || scheme == "http" else { throw refuse(.unsupportedScheme(scheme)) }
        if components.user != nil || components.password != nil || Self.authority(of: text)?.contains("@") == true {
            throw refuse(.userInfo)
        }
        guard components.fragment == nil, !text.contains("#") else { throw refuse(.fragment) }
        var host = (components.host ?? "").lowercased()
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw refuse(.missingHost) }
        let loopback = Self.isLoopbackHost(host)
        if scheme == "http" {
            guard loopback, allowsLoopbackHTTP else { throw refuse(.plainHTTP) }
        }
        self.text = text
        self.url = url
        self.host = host
        self.isLoopback = loopback
        self.isPlainHTTP = scheme == "http"
    }

    /// The URL as given.
    public var description: String { text }

    /// Whether `host` (lowercased, no brackets) is `localhost`, an IPv4 address in `127.0.0.0/8`
    /// or the IPv6 loopback `::1` (in any spelling).
    public static func isLoopbackHost(_ host: String) -> Bool {
        let host = host.lowercased()
        if host == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            return UInt32(bigEndian: v4.s_addr) >> 24 == 127
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            let bytes = withUnsafeBytes(of: &v6) { Array($0) }
            return bytes == [UInt8](repeating: 0, count: 15) + [1]
        }
        return false
    }

    /// The text between `://` and the first `/`, `?` or `#` after it (nil without `://`).
    static func authority(of text: String) -> Substring? {
        guard let separator = text.range(of: "://") else { return nil }
        let rest = text[separator.upperBound...]
        return rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
    }
}
