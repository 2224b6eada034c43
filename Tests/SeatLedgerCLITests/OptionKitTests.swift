@testable import seatledger
import Testing

/// A command declared only here, to show that one declaration gives parsing, help, completion
/// and `help --json` for a command nobody wrote those for.
private enum SampleCommand: Command {
    static let name = "sample"
    static let summary = "a command for the option kit's tests"
    static let size = Option<Int>("size", value: "N", help: "how many (default 3)", default: 3, parse: .integer(in: 1...9))
    static let tag = Option<[String]>(repeating: "tag", value: "T", help: "a tag (repeatable)")
    static let colour = Option<String?>("colour", value: "C", help: "red or blue", completion: .words(["blue", "red"]),
                                        parse: .oneOf(["red", "blue"]))
    static let dryRun = Flag("dry-run", help: "change nothing")
    static let options: [any DeclaredOption] = [LedgerLocation.db, size, tag, colour, dryRun, Flag.json]
    static let help = """
    Usage: seatledger sample [--size N] [--tag T …] [--colour C] [--dry-run] [--db PATH] [--json]

    Options:
    \(OptionHelp.lines(options))
    """
    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode { .success }
}

/// The message of the usage error `body` throws, or `nil` when it throws none.
private func usageMessage(_ body: () throws -> Void) -> String? {
    do {
        try body()
        return nil
    } catch let error as UsageError {
        return error.message
    } catch {
        return "not a usage error: \(error)"
    }
}

@Suite("Declared options")
struct OptionKitTests {
    private func parse(_ words: [String]) throws -> Arguments {
        try Arguments(words, declaring: SampleCommand.options)
    }

    @Test("a declared option reads as its type: the given value, else its default")
    func typedValues() throws {
        #expect(try parse(["--size", "7"])[SampleCommand.size] == 7)
        #expect(try parse(["--size=8"])[SampleCommand.size] == 8)
        #expect(try parse([])[SampleCommand.size] == 3)
        #expect(try parse([])[SampleCommand.colour] == nil)
        #expect(try parse(["--colour", "red"])[SampleCommand.colour] == "red")
        #expect(try parse(["--dry-run"])[SampleCommand.dryRun])
        #expect(try !parse([])[SampleCommand.dryRun])
        #expect(try LedgerLocation(parse(["--db", "x.sqlite"])).path == "x.sqlite")
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        let words: [String]
        let message: String
        var testDescription: String { words.joined(separator: " ") }
    }

    static let refusals = [
        Refusal(words: ["--size", "0"], message: "--size must be an integer in 1…9, got 0"),
        Refusal(words: ["--size", "many"], message: "--size must be an integer in 1…9, got many"),
        Refusal(words: ["--colour", "green"], message: "--colour must be one of red, blue, got green"),
    ]

    @Test("a value its declaration refuses is a usage error naming the option and the reason", arguments: refusals)
    func refusedValue(_ refusal: Refusal) throws {
        let arguments = try parse(refusal.words)   // parsed: the value is checked when read
        let message = usageMessage {
            _ = try arguments[SampleCommand.size]
            _ = try arguments[SampleCommand.colour]
        }
        #expect(message == refusal.message)
    }

    @Test("the shared time options refuse epoch seconds naming the option")
    func timeOption() throws {
        let arguments = try Arguments(["--as-of", "1730000000"], declaring: Clocks.options)
        let message = try #require(usageMessage { _ = try arguments[Clocks.asOf] })
        #expect(message.hasPrefix("--as-of 1730000000 is ambiguous"), "\(message)")
        #expect(try Arguments(["--known-at", "2026-11-02"], declaring: Clocks.options)[Clocks.knownAt] == 1_793_577_600_000)
    }

    @Test("a repeatable option keeps every value in order; any other option given twice is refused")
    func repeatable() throws {
        #expect(try parse(["--tag", "a", "--tag=b", "--tag", "c"])[SampleCommand.tag] == ["a", "b", "c"])
        #expect(try parse([])[SampleCommand.tag] == [])
        #expect(usageMessage { _ = try parse(["--size", "1", "--size", "2"]) } == "--size given twice (1, then 2); it takes one value")
    }

    struct Misuse: Sendable, CustomTestStringConvertible {
        let words: [String]
        let message: String
        var testDescription: String { words.joined(separator: " ") }
    }

    static let misuses = [
        Misuse(words: ["--sise", "2"], message: "unknown option --sise; did you mean `--size`?"),
        Misuse(words: ["--dryrun"], message: "unknown option --dryrun; did you mean `--dry-run`?"),
        Misuse(words: ["--jsn"], message: "unknown option --jsn; did you mean `--json`?"),
        Misuse(words: ["--nothing-like-it"], message: "unknown option --nothing-like-it"),
        Misuse(words: ["-x"], message: "unknown option -x"),
        Misuse(words: ["--size", "--json"],
               message: "--size needs a value, but the next argument is the option --json (write --size=--json if that really is the value)"),
        Misuse(words: ["--size"], message: "--size needs a value"),
        Misuse(words: ["--size="], message: "--size needs a value, not an empty string"),
        Misuse(words: ["--dry-run=yes"], message: "--dry-run takes no value"),
    ]

    @Test("unknown options name the closest declared one; a missing value is refused", arguments: misuses)
    func misuse(_ misuse: Misuse) {
        #expect(usageMessage { _ = try parse(misuse.words) } == misuse.message)
    }

    @Test("-h and -q are the global flags every command takes; `--` ends the options")
    func globalFlagsAndSeparator() throws {
        let arguments = try parse(["-h", "-q", "--", "--size", "x"])
        #expect(arguments[Flag.help])
        #expect(arguments[Flag.quiet])
        #expect(arguments.positionals == ["--size", "x"])
        #expect(try arguments[SampleCommand.size] == 3)
    }

    @Test("the help lines come from the declarations, at the list's column")
    func helpLines() {
        #expect(SampleCommand.help.contains("""
              --db PATH|URL    ledger file or postgresql:// URL (default: $SEATLEDGER_DB, else ./seatledger.sqlite)
              --size N         how many (default 3)
              --tag T          a tag (repeatable)
              --colour C       red or blue
              --dry-run        change nothing
              --json           machine-readable output on stdout
            """))
        let long = Option<String?>("a-rather-long-option", value: "VALUE", help: "first line\nsecond line")
        #expect(OptionHelp.lines([long], column: 10) == "  --a-rather-long-option VALUE  first line\n          second line")
        let under = Option<String?>("x", value: "V", help: "\nunder the name")
        #expect(OptionHelp.lines([under], column: 8) == "  --x V\n        under the name")
    }

    @Test("completions offer each declared option, and a declaration's words after it")
    func completions() {
        let bash = Completions.bash([SampleCommand.self])
        #expect(bash.contains(#"sample) opts="--colour --db --size --tag --dry-run --help --json --quiet"; vals="--colour --db --size --tag";"#), "\(bash)")
        #expect(bash.contains(#"--colour) COMPREPLY=( $(compgen -W "blue red" -- "$cur") ); return ;;"#), "\(bash)")
        let zsh = Completions.zsh([SampleCommand.self])
        #expect(zsh.contains("'*--tag=[tag]:value:_files'"), "a repeatable option may be given again: \(zsh)")
        #expect(zsh.contains("'--colour=[colour]:value:(blue red)'"), "\(zsh)")
        #expect(zsh.contains("'--dry-run[dry-run]'"), "\(zsh)")
        let fish = Completions.fish([SampleCommand.self])
        #expect(fish.contains("-l colour -xa 'blue red'"), "\(fish)")
        #expect(fish.contains("-l size -r -F"), "\(fish)")
    }

    @Test("help --json lists the declared options, the repeatable ones and the flags")
    func helpJSON() throws {
        let json = CommandHelp.json([SampleCommand.self])
        let command = try #require(json["commands"]?.arrayValue?.first)
        #expect(command["options"]?.arrayValue?.compactMap(\.stringValue) == ["--colour", "--db", "--size", "--tag"])
        #expect(command["repeatableOptions"]?.arrayValue?.compactMap(\.stringValue) == ["--tag"])
        #expect(command["flags"]?.arrayValue?.compactMap(\.stringValue) == ["--dry-run", "--help", "--json", "--quiet"])
    }

    @Test("every command's help lists each option it declares", arguments: [
        InitCommand.self, ConfigCommand.self, IngestCommand.self, RecordCommand.self, VerifyCommand.self, QuarantineCommand.self,
        EventsCommand.self, CheckCommand.self, GroupsCommand.self, GroupCommand.self, MemberCommand.self, EntitlementsCommand.self,
        RebuildCommand.self, ReplayCommand.self, DiffCommand.self, AuditCommand.self, EnqueueCommand.self, DemoCommand.self,
        BackfillCommand.self, ReconcileCommand.self, SeatsCommand.self, APIConfigCommand.self, CopyCommand.self, ServeCommand.self,
        TokenCommand.self, RetractCommand.self, CompletionsCommand.self,
    ] as [any Command.Type])
    func helpListsEveryOption(_ command: any Command.Type) {
        let lines = CommandHelp.text(command).split(separator: "\n")
        // `ingest --max-line-length` is the old name of --max-message-bytes, documented in its entry.
        for option in command.options where option.name != "max-line-length" {
            let spelled = option.declaration.spelled
            #expect(lines.contains { $0.hasPrefix("  \(spelled) ") || $0 == "  \(spelled)" },
                    "\(command.name) --help has no entry for \(spelled)")
        }
        let names = command.declarations.map { $0.name }
        #expect(Set(names).count == names.count, "\(command.name) declares an option twice: \(names)")
    }
}
