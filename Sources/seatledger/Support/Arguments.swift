import Foundation

/// A command-line usage error: exit 2 with the message and a pointer to `--help`.
struct UsageError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// An input the command was pointed at is missing or unreadable (a file, an event, a quarantine
/// item): exit 2 with the message, without the pointer to `--help` (the usage was fine).
struct InputError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// Parsed arguments of one command: positionals, options with values, and flags.
///
/// Options are declared up front so a typo (`--jsn`) is an error, not silently ignored.
struct Arguments {
    private(set) var positionals: [String] = []
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// Flags every command takes: `--help` (`-h`) and `--quiet` (`-q`).
    static let globalFlags: Set<String> = ["help", "quiet"]

    /// Parses `arguments` given the option names that take a value, those of them that may be
    /// given more than once (`repeatable`), and the boolean flags.
    ///
    /// Any other option given twice is a usage error: the second value is more likely a typo (or
    /// meant for another command) than a change of mind, and silently using one would hide it.
    /// So is a value that is itself an option (`--db --json`: the path was forgotten); write
    /// `--db=--json` for a value that really starts with `--`. An unknown option names the
    /// closest known one.
    init(_ arguments: [String], options: Set<String>, repeatable: Set<String> = [], flags allowedFlags: Set<String>) throws {
        let allowedFlags = allowedFlags.union(Self.globalFlags)
        func unknown(_ option: String) -> UsageError {
            let known = options.union(allowedFlags).map { "--\($0)" }
            return UsageError(message: "unknown option \(option)\(Suggestion.note(for: option, among: known))")
        }
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("--") || argument == "-" {
                if !onlyPositionals, argument.hasPrefix("-"), argument != "-", argument.count > 1, !argument.hasPrefix("--") {
                    if argument == "-h" { flags.insert("help"); continue }
                    if argument == "-q" { flags.insert("quiet"); continue }
                    throw unknown(argument)
                }
                positionals.append(argument)
                continue
            }
            if argument == "--" { onlyPositionals = true; continue }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if options.contains(name) {
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < arguments.count else { throw UsageError(message: "--\(name) needs a value") }
                    value = arguments[index]
                    if value.hasPrefix("-----BEGIN") {
                        // A pasted PEM key: never echoed (a secret, and errors get logged).
                        throw UsageError(message: "--\(name) was given a PEM key's text (not printed); give the key's file path")
                    }
                    if value.hasPrefix("--"), value.count > 2 {
                        throw UsageError(message: "--\(name) needs a value, but the next argument is the option \(value) "
                                         + "(write --\(name)=\(value) if that really is the value)")
                    }
                    index += 1
                }
                // No option takes an empty value (a path, a name, a number, a reason): `--db ""`
                // from an unset shell variable would otherwise name no file at all.
                guard !value.isEmpty else { throw UsageError(message: "--\(name) needs a value, not an empty string") }
                if let earlier = values[name]?.first, !repeatable.contains(name) {
                    throw UsageError(message: "--\(name) given twice (\(earlier), then \(value)); it takes one value")
                }
                values[name, default: []].append(value)
            } else if allowedFlags.contains(name) {
                guard inlineValue == nil else { throw UsageError(message: "--\(name) takes no value") }
                flags.insert(name)
            } else {
                throw unknown("--\(name)")
            }
        }
    }

    /// The last value given for `--name`.
    func value(_ name: String) -> String? { values[name]?.last }

    /// Every value given for a repeatable `--name`.
    func values(_ name: String) -> [String] { values[name] ?? [] }

    /// Throws a usage error unless the first positional is one of `actions` (naming the closest).
    func requireAction(_ actions: [String], command: String) throws -> String {
        guard let action = positionals.first else {
            throw UsageError(message: "expected one of: \(actions.map { "\(command) \($0)" }.joined(separator: ", "))")
        }
        guard actions.contains(action) else {
            throw UsageError(message: "unknown \(command) action '\(action)'\(Suggestion.note(for: action, among: actions, prefix: "\(command) "))"
                             + " (expected \(actions.joined(separator: ", ")))")
        }
        return action
    }

    /// Whether `--name` was given.
    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The required value of `--name`.
    func required(_ name: String) throws -> String {
        guard let value = value(name) else { throw UsageError(message: "--\(name) is required") }
        return value
    }

    /// The one argument of `COMMAND show X` (e.g. `group show REF`), or a usage error naming the form.
    func showTarget(command: String, noun: String) throws -> String {
        guard positionals.first == "show" else {
            let note = positionals.first.map { Suggestion.note(for: $0, among: ["show"], prefix: "\(command) ") } ?? ""
            throw UsageError(message: "expected `\(command) show \(noun)`\(note)")
        }
        guard positionals.count == 2 else { throw UsageError(message: "\(command) show needs exactly one \(noun)") }
        return positionals[1]
    }

    /// Throws a usage error naming the first positional argument beyond the first `limit`
    /// (`nil`: no limit); one that looks like a ledger path or URL gets a hint at `--db`.
    func checkPositionals(limit: Int?) throws {
        guard let limit, positionals.count > limit else { return }
        let extra = positionals[limit]
        var message = "unexpected argument \(extra)"
        if Self.looksLikeLedger(extra) { message += " (to use the ledger at \(extra), pass --db \(extra))" }
        throw UsageError(message: message)
    }

    /// Whether `text` looks like a ledger file path or database URL rather than a command word.
    static func looksLikeLedger(_ text: String) -> Bool {
        let lowered = text.lowercased()
        return text.contains("/") || lowered.hasPrefix("postgres") || [".sqlite", ".sqlite3", ".db"].contains { lowered.hasSuffix($0) }
    }

    /// `--db`, else `$SEATLEDGER_DB` (an empty one counts as unset), else `./seatledger.sqlite`.
    var databasePath: String {
        value("db") ?? ProcessInfo.processInfo.environment["SEATLEDGER_DB"].flatMap { $0.isEmpty ? nil : $0 } ?? "seatledger.sqlite"
    }
}
