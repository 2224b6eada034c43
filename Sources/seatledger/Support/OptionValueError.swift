/// Why an option's value is refused, without the option's name: ``Option`` reports it as a usage
/// error naming the option (`--threads must be an integer in 1…256, got x`).
struct OptionValueError: Error, Sendable {
    /// The reason, worded to follow `--name ` (e.g. `must be a number of seconds above 0, got -1`).
    let reason: String

    init(_ reason: String) {
        self.reason = reason
    }
}
