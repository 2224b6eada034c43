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

/// Parsed arguments of one command: positionals, and the values of the options it declares.
///
/// Options are declared up front (``Command/options``) so a typo (`--jsn`) is an error, not
/// silently ignored. A command reads an option with `try arguments[option]` (the typed value of
/// an ``Option``) or `arguments[flag]` (whether a ``Flag`` was given).
struct Arguments {
    private(set) var positionals: [String] = []
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// Flags every command takes: `--help` (`-h`) and `--quiet` (`-q`).
    static let globalFlags: [Flag] = [.help, .quiet]

    /// Parses `arguments` given the options the command declares (``globalFlags`` are added).
    ///
    /// An option given twice is a usage error unless it is repeatable: the second value is more
    /// likely a typo (or meant for another command) than a change of mind, and silently using one
    /// would hide it. So is a value that is itself an option (`--db --json`: the path was
    /// forgotten); write `--db=--json` for a value that really starts with `--`. An unknown
    /// option names the closest known one.
    init(_ arguments: [String], declaring declared: [any DeclaredOption]) throws {
        let declarations = (declared + Self.globalFlags).map { $0.declaration }
        var byName: [String: OptionDeclaration] = [:]
        for declaration in declarations where byName[declaration.name] == nil { byName[declaration.name] = declaration }
        func unknown(_ option: String) -> UsageError {
            let known = declarations.map(\.spelled)
            return UsageError(message: "unknown option \(option)\(Suggestion.note(for: option, among: known))")
        }
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("--") || argument == "-" {
                if !onlyPositionals, argument.hasPrefix("-"), argument != "-", argument.count > 1, !argument.hasPrefix("--") {
                    if argument == "-h" { flags.insert(Flag.help.name); continue }
                    if argument == "-q" { flags.insert(Flag.quiet.name); continue }
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
            guard let declaration = byName[name] else { throw unknown("--\(name)") }
            guard declaration.takesValue else {
                guard inlineValue == nil else { throw UsageError(message: "--\(name) takes no value") }
                flags.insert(name)
                continue
            }
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
            if let earlier = values[name]?.first, !declaration.repeatable {
                throw UsageError(message: "--\(name) given twice (\(earlier), then \(value)); it takes one value")
            }
            values[name, default: []].append(value)
        }
    }

    /// The value of `option`: what its declaration makes of the text given (its default, `nil`
    /// or `[]` when it was not given).
    ///
    /// - Throws: ``UsageError`` naming the option when it refuses the value.
    subscript<Value>(_ option: Option<Value>) -> Value {
        get throws { try option.value(from: values[option.name] ?? []) }
    }

    /// Whether `flag` was given.
    subscript(_ flag: Flag) -> Bool { flags.contains(flag.name) }

    /// Whether `option` was given at all (whatever its value, or its default when absent).
    func contains(_ option: some DeclaredOption) -> Bool {
        option.declaration.takesValue ? values[option.name] != nil : flags.contains(option.name)
    }

    /// The value of an option without a default, or a usage error `--name is required`.
    func required<Wrapped>(_ option: Option<Wrapped?>) throws -> Wrapped {
        guard let value = try self[option] else { throw UsageError(message: "\(option.declaration.spelled) is required") }
        return value
    }

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
}
