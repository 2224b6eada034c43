import AppStoreModels

/// The two clocks a desk page is shown at, as the JSON API takes them: `asOf` (Apple's time:
/// what was true then; `nil` is now) and `knownAt` (the ledger's time: what we knew then; `nil`
/// is everything recorded).
public struct DeskClocks: Sendable, Hashable {
    /// The `asOf` asked for, if any.
    public var asOf: EpochMillis?
    /// The `knownAt` asked for, if any.
    public var knownAt: EpochMillis?
    /// The service's now (the default `asOf`).
    public var now: EpochMillis
    /// The ledger the page reads, in a service of several (`serve --config`): every link to
    /// another page carries it; `nil` in a service of one.
    public var ledger: String? = nil

    /// Creates clocks.
    public init(asOf: EpochMillis? = nil, knownAt: EpochMillis? = nil, now: EpochMillis) {
        self.asOf = asOf
        self.knownAt = knownAt
        self.now = now
    }

    /// The moment the page shows.
    public var effectiveAsOf: EpochMillis { asOf ?? now }

    /// The query parameters that carry the clocks to the next page (only those asked for).
    public var parameters: [(name: String, value: String)] {
        var out: [(name: String, value: String)] = []
        if let asOf { out.append(("asOf", Timestamp.iso8601(asOf))) }
        if let knownAt { out.append(("knownAt", Timestamp.iso8601(knownAt))) }
        return out
    }

    /// The query parameters of a link to another page: the clocks and the ledger.
    public var linkParameters: [(name: String, value: String)] {
        parameters + (ledger.map { [("ledger", $0)] } ?? [])
    }

    /// "as of 2026-11-02T00:00:00.000Z (now), with everything recorded" (and "in ledger NAME").
    public var description: String {
        "as of \(Timestamp.iso8601(effectiveAsOf))\(asOf == nil ? " (now)" : ""), "
            + (knownAt.map { "with what was recorded by \(Timestamp.iso8601($0))" } ?? "with everything recorded")
            + (ledger.map { " in ledger \($0)" } ?? "")
    }
}
