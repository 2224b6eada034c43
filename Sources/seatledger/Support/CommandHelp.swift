import AppStoreModels

/// Help derived from a command's declarations: the hand-written text, then the global options,
/// the examples and only the exit statuses that command returns; and the same as JSON.
enum CommandHelp {
    /// The full `seatledger COMMAND --help` text.
    static func text(_ command: any Command.Type) -> String {
        var parts = [trimmed(command.help)]
        var global = ["Global options:",
                      "  -h, --help       this help (also `seatledger help \(command.name)`)",
                      "  -q, --quiet      \(Flag.quiet.declaration.help)"]
        if command.declares(Flag.json) {
            global.append("  With --json, an error is one object on stdout, {\"error\": {\"code\", \"message\", \"exitCode\"}},")
            global.append("  with the same exit status.")
        }
        parts.append(global.joined(separator: "\n"))
        if !command.examples.isEmpty {
            parts.append((["Examples:"] + command.examples.map { "  \($0)" }).joined(separator: "\n"))
        }
        parts.append(exitStatusText(command.exitStatuses))
        return parts.joined(separator: "\n\n")
    }

    /// "Exit status:" and one entry per status, its meaning wrapped under itself.
    static func exitStatusText(_ statuses: [ExitStatus]) -> String {
        (["Exit status:"] + statuses.map { status in
            let lead = "  \(status.code.rawValue)  "
            return wrapped(status.meaning, width: width - lead.count).enumerated()
                .map { index, line in (index == 0 ? lead : String(repeating: " ", count: lead.count)) + line }
                .joined(separator: "\n")
        }).joined(separator: "\n")
    }

    /// The widest line of help text that the generated parts write.
    static let width = 100

    /// `text` cut into lines of at most `width` characters at spaces (a longer word keeps its own line).
    static func wrapped(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            if line.isEmpty {
                line = String(word)
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = String(word)
            }
        }
        if !line.isEmpty || lines.isEmpty { lines.append(line) }
        return lines
    }

    /// `seatledger help --json`: every command's declared options, flags, actions, exit statuses
    /// and examples (what completions and the help are generated from).
    static func json(_ commands: [any Command.Type]) -> JSONValue {
        .object(["commands": .array(commands.map { command in
            .object([
                "name": .string(command.name), "summary": .string(command.summary),
                "options": names(command.declarations.filter(\.takesValue)),
                "repeatableOptions": names(command.declarations.filter(\.repeatable)),
                "flags": names(command.declarations.filter { !$0.takesValue }),
                "actions": .array(command.actions.map(JSONValue.string)),
                "exitStatuses": .array(command.exitStatuses.map { .object(["code": .int(Int64($0.code.rawValue)), "meaning": .string($0.meaning)]) }),
                "examples": .array(command.examples.map(JSONValue.string)),
            ])
        })])
    }

    /// `--name` of each of `declarations`, sorted, once each.
    private static func names(_ declarations: [OptionDeclaration]) -> JSONValue {
        .array(Set(declarations.map(\.spelled)).sorted().map(JSONValue.string))
    }

    private static func trimmed(_ text: String) -> String {
        var text = Substring(text)
        while text.last == "\n" || text.last == " " { text.removeLast() }
        return String(text)
    }
}
