/// What a shell completion offers after an option that takes a value.
enum OptionCompletion: Sendable, Hashable {
    /// File names (the default: paths, and values a shell cannot guess).
    case files
    /// Exactly these words (an option with a fixed set of values).
    case words([String])
    /// Nothing (a flag, which takes no value).
    case none

    /// The words offered, or `nil` when the shell should offer files or nothing.
    var words: [String]? {
        if case .words(let words) = self { return words }
        return nil
    }
}
