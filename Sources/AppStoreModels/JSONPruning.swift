#if canImport(Glibc)
import Glibc
#endif

/// Which parts of a JSON document to build when only some are read (``JSONValue/parse(_:pruning:)``).
///
/// Parts left out are still checked exactly as ``JSONValue/parse(_:)`` checks them (a document
/// one refuses, the other refuses too), then dropped without building their values.
///
/// ```swift
/// let rule = JSONPruning.members(["transactionInfo": .members(["transactionId": .all])])
/// let tree = try JSONValue.parse(text, pruning: rule)   // {"transactionInfo": {"transactionId": "…"}}
/// ```
public struct JSONPruning: Sendable {
    /// The rule with its member names as UTF-8 bytes, compared with names in place (built once,
    /// when the rule is made, not at each parse).
    indirect enum Rule: Sendable {
        case all
        /// `ascii`: every name is ASCII (then an all-ASCII name in the text can be matched by its bytes).
        case members([Member], ascii: Bool)
        case items(Rule)

        struct Member: Sendable {
            let name: String
            let bytes: [UInt8]
            let rule: Rule
        }

        /// The rule of the member named by `name`'s UTF-8 bytes, `nil` when it is left out.
        ///
        /// Names match as `String`s do (by canonical equivalence: a whole parse looks members up
        /// in a `[String: JSONValue]`), so a name such as the Kelvin sign U+212A matches a rule's
        /// `K`. Bytes are compared only when both sides are ASCII, where that is the same thing.
        func member(_ name: UnsafeBufferPointer<UInt8>) -> Rule? {
            guard case .members(let members, let ascii) = self else { return nil }
            if ascii && !JSONTextParser.containsNonASCII(name) {
                for member in members where member.bytes.count == name.count {
                    let equal = member.bytes.withUnsafeBufferPointer { own in
                        guard let mine = own.baseAddress, let theirs = name.baseAddress else { return true }  // both empty
                        return memcmp(mine, theirs, name.count) == 0
                    }
                    if equal { return member.rule }
                }
                return nil
            }
            let text = String(decoding: name, as: UTF8.self)
            return members.first { $0.name == text }?.rule
        }
    }

    let rule: Rule

    /// The value whole.
    public static let all = JSONPruning(rule: .all)

    /// An object keeps only these members, each pruned by its own rule. A value that is not an
    /// object is kept whole (so type checks on it see what they would have seen).
    public static func members(_ members: [String: JSONPruning]) -> JSONPruning {
        let sorted = members.sorted { $0.key < $1.key }
        return JSONPruning(rule: .members(sorted.map { .init(name: $0.key, bytes: Array($0.key.utf8), rule: $0.value.rule) },
                                          ascii: sorted.allSatisfy { $0.key.utf8.allSatisfy { $0 < 0x80 } }))
    }

    /// An array keeps every item, each pruned by this rule. A value that is not an array is kept whole.
    public static func items(_ item: JSONPruning) -> JSONPruning {
        JSONPruning(rule: .items(item.rule))
    }
}

extension JSONValue {
    /// Parses JSON text, building only the parts `pruning` keeps.
    ///
    /// Reading a kept path of the result gives what it gives on the whole tree; members left out
    /// are absent. The text is read in place when the string's storage is contiguous.
    public static func parse(_ text: String, pruning: JSONPruning) throws(JSONParseError) -> JSONValue {
        var text = text
        let result = text.withUTF8 { buffer in
            Result { () throws(JSONParseError) -> JSONValue in try JSONTextParser.parse(buffer, pruning: pruning) }
        }
        return try result.get()
    }
}
