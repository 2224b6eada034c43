/// `seatledger completions bash|zsh|fish`: a completion script generated from the command list.
enum CompletionsCommand: Command {
    static let name = "completions"
    static let summary = "print a shell completion script (bash, zsh or fish) for every command and option"
    static let options: [any DeclaredOption] = []
    static let actions = Completions.shells
    static let help = """
    Usage: seatledger completions bash|zsh|fish

    Prints a completion script for the shell, generated from the commands and options this build
    declares (so it always matches `seatledger --help`): commands, each command's options and
    actions, the values of --environment, --format and --kind, and files for other values.
    """
    static let examples = [
        "source <(seatledger completions bash)",
        "seatledger completions zsh > \"${fpath[1]}/_seatledger\"",
        "seatledger completions fish > ~/.config/fish/completions/seatledger.fish",
    ]

    static func maxPositionals(_ positionals: [String]) -> Int? { 1 }

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        let shell = try arguments.requireAction(actions, command: name)
        // `run` is called from `main()` on the main thread, where the command list lives.
        let all = MainActor.assumeIsolated { commands }
        Terminal.out(Completions.script(for: shell, commands: all)!, terminator: "")
        return .success
    }
}
