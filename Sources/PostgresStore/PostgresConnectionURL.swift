import LedgerStorage
import Foundation
import PostgresClient

/// Parses and checks a PostgreSQL connection URL before libpq sees it, so nothing libpq prints
/// about a malformed URL (which quotes the whole URL, password included) is ever shown.
///
/// ```swift
/// PostgresConnectionURL.redact("POSTGRESQL://u:pw@[::1:5432/db")   // "POSTGRESQL://u@[::1:5432/db"
/// try PostgresConnectionURL.checked("POSTGRESQL://u@db/x")          // "postgresql://u@db/x"
/// ```
///
/// Schemes are case-insensitive (libpq's are not: it takes `POSTGRESQL://…` for a
/// `key=value` string and echoes it). Passwords belong in the environment (`PGPASSWORD`) or a
/// password file (`PGPASSFILE`, `~/.pgpass`), which libpq reads itself, rather than in a URL on a
/// command line where `ps` shows it.
public enum PostgresConnectionURL {
    /// `url` without any password (user info, `password=` query parameter, or a `key=value` string's `password`).
    public static func redact(_ url: String) -> String { PostgresURLRedaction.redact(url) }

    /// `url` with its scheme lower-cased, after checking what libpq would otherwise refuse with a
    /// message quoting the URL: an invalid percent-escape, or an IPv6 host whose `[` is not closed.
    /// A `key=value` connection string is returned as it is. Errors name the URL redacted.
    public static func checked(_ url: String) throws(LedgerStoreError) -> String {
        guard let scheme = schemeLength(url) else { return url }
        let normalized = url.prefix(scheme).lowercased() + url.dropFirst(scheme)
        let bytes = Array(normalized.utf8)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, isHex(bytes[index + 1]), isHex(bytes[index + 2]) else {
                    throw .badConfiguration("invalid percent-escape in the PostgreSQL URL \(redact(url)) "
                        + "(a '%' must be followed by two hex digits; write a literal '%' as %25)")
                }
                index += 3
            } else {
                index += 1
            }
        }
        let rest = normalized.dropFirst(scheme)
        // The user information as redaction reads it. libpq ends it at the first '/': a password
        // with an unencoded '/' would be cut there, the rest taken for a host or port, and a
        // fragment of it quoted in libpq's message.
        if let information = PostgresURLRedaction.userInformation(in: rest), information.contains("/") {
            throw .badConfiguration("the user information of the PostgreSQL URL \(redact(url)) holds an unencoded '/' "
                + "(write it as %2F in a password, or give the password with PGPASSWORD or a password file)")
        }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let hosts = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
        var open = false
        for character in hosts {
            if character == "[" {
                if open { break }
                open = true
            } else if character == "]" {
                open = false
            }
        }
        if open || hosts.filter({ $0 == "[" }).count != hosts.filter({ $0 == "]" }).count {
            throw .badConfiguration("malformed host in the PostgreSQL URL \(redact(url)): an IPv6 address's '[' has no matching ']' "
                + "(expected postgresql://user@[::1]:5432/db)")
        }
        return normalized
    }

    /// `message` (from libpq) with every occurrence of the URL's password replaced by `***`: a
    /// last line of defence for messages that quote part of the connection string.
    public static func scrub(_ message: String, of url: String) -> String {
        var result = message
        for secret in passwords(in: url) where secret.count >= 1 {
            result = result.replacingOccurrences(of: secret, with: "***")
            if let decoded = secret.removingPercentEncoding, decoded != secret { result = result.replacingOccurrences(of: decoded, with: "***") }
        }
        if result.contains(url) { result = result.replacingOccurrences(of: url, with: redact(url)) }
        return result
    }

    /// The password texts in `url` (user info and `password=` parameters), as written.
    static func passwords(in url: String) -> [String] {
        guard let scheme = schemeLength(url) else { return [] }
        var found: [String] = []
        let rest = url.dropFirst(scheme)
        let beforeQuery = rest.firstIndex(where: { $0 == "?" || $0 == "#" }).map { rest[..<$0] } ?? rest
        if let at = beforeQuery.lastIndex(of: "@"), let colon = beforeQuery[..<at].firstIndex(of: ":") {
            found.append(String(beforeQuery[beforeQuery.index(after: colon)..<at]))
        }
        if let query = rest.firstIndex(of: "?") {
            for pair in rest[rest.index(after: query)...].split(separator: "&") where pair.lowercased().hasPrefix("password=") {
                found.append(String(pair.dropFirst("password=".count)))
            }
        }
        return found.filter { !$0.isEmpty }
    }

    /// The length of a `postgresql://` or `postgres://` prefix in any case, or `nil`.
    static func schemeLength(_ url: String) -> Int? {
        let lowered = url.prefix(13).lowercased()
        if lowered.hasPrefix("postgresql://") { return 13 }
        if lowered.hasPrefix("postgres://") { return 11 }
        return nil
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }
}
