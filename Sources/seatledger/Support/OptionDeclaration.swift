/// What a command line option is, apart from the type of its value: its name, the word its help
/// shows for the value, its help text, whether it may be given more than once, and what a shell
/// completes after it.
///
/// Parsing (``Arguments``), the option lines of `--help` (``OptionHelp``), shell completions
/// (``Completions``) and `seatledger help --json` (``CommandHelp/json(_:)``) all read it, so an
/// option declared once (an ``Option`` or a ``Flag``) gets all of them.
struct OptionDeclaration: Sendable, Hashable {
    /// The name after `--`.
    let name: String
    /// The value's placeholder in help (`PATH|URL`, `T`, `N`); `nil` for a flag, which takes no value.
    let valueName: String?
    /// The help text after the option: lines after the first continue under the first; a text
    /// that starts with a line break puts the whole text under the option.
    let help: String
    /// Whether the option may be given more than once (each value kept, in order).
    let repeatable: Bool
    /// What a shell offers after the option.
    let completion: OptionCompletion
    /// The column its help text starts at in every command that lists it, or `nil` for the
    /// column of the list it appears in (``OptionHelp/lines(_:column:)``).
    let column: Int?

    /// Whether the option takes a value (else it is a flag).
    var takesValue: Bool { valueName != nil }

    /// `--name`.
    var spelled: String { "--\(name)" }
}

/// An option a command declares: an ``Option`` (with a typed value) or a ``Flag``.
protocol DeclaredOption: Sendable {
    /// The option's name, help and completion.
    var declaration: OptionDeclaration { get }
}

extension DeclaredOption {
    /// The option's name (after `--`).
    var name: String { declaration.name }
}
