import Foundation

/// Removes the password from a libpq connection string, for messages and ``PostgresEventStore/location``.
///
/// Handles both forms libpq accepts: a URL (`postgresql://user:secret@host/db?password=…`, the
/// password in the user-info part or as a query parameter) and a `key=value` string
/// (`host=db password='…' dbname=x`).
enum PostgresURLRedaction {
    /// `connection` without any password.
    static func redact(_ connection: String) -> String {
        // Schemes are case-insensitive: `POSTGRESQL://u:pw@…` is a URL too, never a key=value string.
        if PostgresConnectionURL.schemeLength(connection) != nil {
            return redactURL(connection)
        }
        return redactKeywordValue(connection)
    }

    private static func redactURL(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let scheme = url[..<schemeEnd.upperBound]
        var rest = url[schemeEnd.upperBound...]
        // When there is no user information, the authority ends at the first '/', '?' or '#'.
        let lastAt = userInformation(in: rest)?.endIndex
        let authorityEnd = lastAt.flatMap { at in rest[at...].firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) }
            ?? rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            let user = userInfo.firstIndex(of: ":").map { userInfo[..<$0] } ?? userInfo
            authority = Substring(String(user) + String(authority[at...]))
        }
        rest = rest[authorityEnd...]
        var result = String(scheme) + String(authority)
        if let queryStart = rest.firstIndex(of: "?") {
            result += String(rest[..<queryStart])
            let afterQuery = rest[rest.index(after: queryStart)...]
            let fragmentStart = afterQuery.firstIndex(of: "#") ?? afterQuery.endIndex
            let kept = afterQuery[..<fragmentStart].split(separator: "&", omittingEmptySubsequences: false)
                .filter { !$0.lowercased().hasPrefix("password=") }
            if !kept.isEmpty { result += "?" + kept.joined(separator: "&") }
            result += String(afterQuery[fragmentStart...])
        } else {
            result += String(rest)
        }
        return result
    }

    /// The user information of `rest` (a URL after `scheme://`): up to the last '@' before any
    /// '?' or '#', since a mistyped password may hold an unescaped '/' (the authority is not
    /// trusted to end at the first '/'); `nil` without an '@'. Redaction and
    /// ``PostgresConnectionURL/checked(_:)`` read it by this one rule.
    static func userInformation(in rest: Substring) -> Substring? {
        let beforeQuery = rest[..<(rest.firstIndex(where: { $0 == "?" || $0 == "#" }) ?? rest.endIndex)]
        return beforeQuery.lastIndex(of: "@").map { beforeQuery[..<$0] }
    }

    /// `key=value` pairs separated by spaces; values may be single-quoted with `\'` and `\\` escapes.
    private static func redactKeywordValue(_ text: String) -> String {
        var kept: [String] = []
        var index = text.startIndex
        while index < text.endIndex {
            while index < text.endIndex, text[index].isWhitespace { index = text.index(after: index) }
            guard index < text.endIndex else { break }
            let start = index
            var inQuotes = false
            while index < text.endIndex {
                let character = text[index]
                if character == "\\", inQuotes {
                    index = text.index(after: index)
                    if index < text.endIndex { index = text.index(after: index) }
                    continue
                }
                if character == "'" { inQuotes.toggle() }
                if character.isWhitespace, !inQuotes { break }
                index = text.index(after: index)
            }
            let pair = String(text[start..<index])
            let key = pair.split(separator: "=", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            if key.lowercased() != "password" { kept.append(pair) }
        }
        return kept.joined(separator: " ")
    }
}
