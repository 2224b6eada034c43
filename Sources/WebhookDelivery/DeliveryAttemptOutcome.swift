/// What one attempt to deliver a webhook gave: the answer's status (if any), whether it counts as
/// delivered, how long it took, the start of the answer, and why it failed without an answer.
///
/// Only a 2xx answer is a success. A 3xx is a failure (redirects are never followed), and so is
/// every 4xx and 5xx. No text here ever holds a signing secret.
public struct DeliveryAttemptOutcome: Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status of the answer; `nil` when no HTTP answer came (timeout, connection refused …).
    public let status: Int?
    /// Milliseconds from sending the request to the end of the answer (or the failure), measured
    /// with a monotonic clock.
    public let latencyMilliseconds: Int64
    /// At most ``WebhookPoster/snippetByteLimit`` bytes of the answer's body as UTF-8 text, cut on
    /// a character boundary, control characters replaced by spaces; empty when there is none.
    public let responseSnippet: String
    /// Why the attempt failed: no answer (`no response within 10.0 s (timed out)`, connection
    /// refused …), or an answer that is not a success (a redirect that was not followed); `nil`
    /// for a success and for a plain 4xx or 5xx, whose ``status`` says it.
    public let error: String?

    /// An outcome.
    public init(status: Int?, latencyMilliseconds: Int64, responseSnippet: String = "", error: String? = nil) {
        self.status = status
        self.latencyMilliseconds = latencyMilliseconds
        self.responseSnippet = responseSnippet
        self.error = error
    }

    /// Whether the endpoint answered 2xx: the delivery is done.
    public var succeeded: Bool {
        guard let status else { return false }
        return (200..<300).contains(status)
    }

    /// `delivered: 204 in 12 ms`, `failed: 500 in 8 ms: "oops"`, `failed: no response in 10001 ms: …`.
    public var description: String {
        var text = succeeded ? "delivered: " : "failed: "
        text += status.map(String.init) ?? "no response"
        text += " in \(latencyMilliseconds) ms"
        if let error { text += ": \(error)" }
        if !responseSnippet.isEmpty { text += " (answer: \"\(responseSnippet)\")" }
        return text
    }
}
