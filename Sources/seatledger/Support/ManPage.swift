/// `seatledger help --man`: the manual page (roff, section 1), made from the same declarations as
/// `--help`: the global help, then every command's full `--help` text in the order of the
/// command list. The Debian package installs it as `seatledger.1`, so it cannot drift from `--help`.
enum ManPage {
    /// The page for `commands`, with `globalHelp` as its description.
    static func render(commands: [any Command.Type], globalHelp: String, version: String) -> String {
        var lines = [
            ".TH SEATLEDGER 1 \"\" \"seatledger \(escaped(version))\" \"User Commands\"",
            ".SH NAME",
            "seatledger \\- an event\\-sourced ledger for App Store multiseat (group) subscriptions",
            ".SH SYNOPSIS",
            ".B seatledger",
            ".I COMMAND",
            "[options]",
            ".SH DESCRIPTION",
        ]
        lines += preformatted(globalHelp.split(separator: "\n", omittingEmptySubsequences: false).dropFirst().joined(separator: "\n"))
        lines.append(".SH COMMANDS")
        for command in commands {
            lines.append(".SS \"seatledger \(escaped(command.name))\"")
            lines.append(escaped(command.summary))
            lines += preformatted(CommandHelp.text(command))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `text` as a no-fill block, each line kept as `--help` prints it.
    private static func preformatted(_ text: String) -> [String] {
        [".PP", ".nf"] + text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.isEmpty ? "" : escaped(String(line))
        } + [".fi"]
    }

    /// One line of text for roff: backslashes and hyphens escaped (options stay searchable as
    /// ASCII "-"), and a leading `.` or `'` made text rather than a request.
    static func escaped(_ line: String) -> String {
        let body = line.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
        return body.hasPrefix(".") || body.hasPrefix("'") ? "\\&" + body : body
    }
}
