/// The option lines of a command's `--help`, written from the declarations.
///
/// One entry per option: two spaces, `--name VALUE`, then its help text from the list's column
/// (or the option's own ``OptionDeclaration/column``), at least one space after the name and two
/// when the name reaches past the column. Lines after the first continue at the column; a help
/// text that starts with a line break starts under the name.
///
/// ```
///   --db PATH|URL    ledger file or postgresql:// URL (default: $SEATLEDGER_DB, else ./seatledger.sqlite)
///   --limit N        at most N events (default: all)
/// ```
enum OptionHelp {
    /// The lines for `options`, their help from `column` (default 19, the column of `--db`'s help).
    /// Meant to be interpolated into a help text on a line of its own (no trailing line break).
    static func lines(_ options: [any DeclaredOption], column: Int = 19) -> String {
        options.map { entry($0.declaration, column: $0.declaration.column ?? column) }.joined(separator: "\n")
    }

    /// One option's entry.
    static func entry(_ declaration: OptionDeclaration, column: Int) -> String {
        let lead = "  " + declaration.spelled + (declaration.valueName.map { " " + $0 } ?? "")
        let indent = String(repeating: " ", count: column)
        var help = declaration.help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var lines: [String]
        if help.first == "" {
            help.removeFirst()
            lines = [lead]
        } else {
            let first = help.isEmpty ? "" : help.removeFirst()
            let gap = lead.count < column ? String(repeating: " ", count: column - lead.count) : "  "
            lines = [lead + gap + first]
        }
        lines += help.map { indent + $0 }
        return lines.joined(separator: "\n")
    }
}
