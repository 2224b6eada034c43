/// A boolean command line option (`--json`): given or not. Read with `arguments[flag]`.
struct Flag: DeclaredOption {
    let declaration: OptionDeclaration

    /// A flag named `name` (after `--`) with its help text (see ``OptionDeclaration/help``) and,
    /// when it lines up alike in every command, the column that text starts at.
    init(_ name: String, help: String, column: Int? = nil) {
        declaration = OptionDeclaration(name: name, valueName: nil, help: help, repeatable: false, completion: .none, column: column)
    }

    private init(declaration: OptionDeclaration) {
        self.declaration = declaration
    }

    /// The same flag with the help text one command gives it.
    func help(_ text: String) -> Flag {
        Flag(declaration: OptionDeclaration(name: declaration.name, valueName: nil, help: text, repeatable: false,
                                            completion: .none, column: declaration.column))
    }

    /// `-h`, `--help`: every command takes it.
    static let help = Flag("help", help: "this help")
    /// `-q`, `--quiet`: every command takes it.
    static let quiet = Flag("quiet", help: "no progress, notes or warnings on stderr (errors are still printed)")
    /// `--json`: machine-readable output, and errors as one JSON object on stdout.
    static let json = Flag("json", help: "machine-readable output on stdout", column: 19)
    /// `--progress`: progress lines on stderr even when it is not a terminal.
    static let progress = Flag("progress", help: "progress on stderr even when it is not a terminal")
}
