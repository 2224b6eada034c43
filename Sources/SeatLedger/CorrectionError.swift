/// Why an operator's correction (a retraction or a quarantine dismissal) was refused.
public struct CorrectionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was refused and why, naming the event or item.
    public let message: String

    /// Creates an error with its message.
    public init(_ message: String) { self.message = message }

    /// The text a person reads (what the CLI prints for it).
    public var description: String { message }
}
