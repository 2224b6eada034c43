import Foundation
import RedisStreams
import SeatLedger

/// The one rule for a URL an error message echoes from the command line (a value given twice,
/// an unexpected positional, an input file that cannot be read, a location that is no ledger):
/// its credentials are hidden before the message is printed, as text or under `--json`.
///
/// Every URL in the message is found (a scheme followed by `:/` or `://`, up to the next white
/// space), read as `scheme://…` (so the `postgresql:/` and `redis:/` typos are covered), and
/// redacted by the helper that owns its scheme: `postgresql://` / `postgres://` by the PostgreSQL
/// engine's rule (``StoreLocation/redacted(_:)``: the password in the user information and any
/// `password=` query parameter), `redis://` / `rediss://` by ``RedisStreamURL/redacted(_:)``
/// (everything before the last `@`); any other scheme the same way as Redis. The text the user
/// typed is kept otherwise (its slashes included).
///
/// ```swift
/// EchoedURLs.redacted("unexpected argument postgresql:/app:s3cret@db/ledger")
/// // "unexpected argument postgresql:/app@db/ledger"
/// ```
enum EchoedURLs {
    /// `message` with the credentials of every URL in it hidden.
    static func redacted(_ message: String) -> String {
        guard message.contains(":/") else { return message }
        var result = ""
        var index = message.startIndex
        while index < message.endIndex {
            let end = message[index...].firstIndex(where: \.isWhitespace) ?? message.endIndex
            if end == index {
                result.append(message[index])
                index = message.index(after: index)
                continue
            }
            result += redactedWord(message[index..<end])
            index = end
        }
        return result
    }

    /// One white-space-free word: the text before its URL kept, the URL (to the word's end) redacted.
    private static func redactedWord(_ word: Substring) -> String {
        guard let start = urlStart(in: word) else { return String(word) }
        return String(word[..<start]) + redactedURL(word[start...])
    }

    /// Where the first `scheme:/` of `word` starts: a letter not preceded by a scheme character,
    /// then letters, digits, `+`, `-` or `.`, then `:/`.
    private static func urlStart(in word: Substring) -> Substring.Index? {
        var index = word.startIndex
        while index < word.endIndex {
            let previousIsSchemeCharacter = index > word.startIndex && isSchemeCharacter(word[word.index(before: index)])
            if !previousIsSchemeCharacter, word[index].isASCII, word[index].isLetter {
                var end = word.index(after: index)
                while end < word.endIndex, isSchemeCharacter(word[end]) { end = word.index(after: end) }
                if word[end...].hasPrefix(":/") { return index }
                index = end
            } else {
                index = word.index(after: index)
            }
        }
        return nil
    }

    private static func isSchemeCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || "+-.".contains(character))
    }

    /// `url` (`scheme:/…` or `scheme://…`) with its credentials hidden by its scheme's rule.
    private static func redactedURL(_ url: Substring) -> String {
        guard let colon = url.firstIndex(of: ":") else { return String(url) }
        let scheme = url[..<colon]
        let afterColon = url[url.index(after: colon)...]
        let slashes = afterColon.prefix { $0 == "/" }
        let body = afterColon.dropFirst(min(slashes.count, 2))
        let prefix = "\(scheme)://"
        let normalised = prefix + body
        let redacted: String
        switch scheme.lowercased() {
        case "postgresql", "postgres": redacted = StoreLocation.redacted(normalised)
        default: redacted = RedisStreamURL.redacted(normalised)
        }
        guard redacted.hasPrefix(prefix) else { return RedisStreamURL.redacted(normalised) }
        return "\(scheme):\(slashes.prefix(2))" + redacted.dropFirst(prefix.count)
    }
}
