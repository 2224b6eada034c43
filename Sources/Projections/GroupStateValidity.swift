import AppStoreModels

extension GroupProjection {
    /// The first moment after `asOf` at which the state of a group with these facts (every event
    /// recorded, `knownAt` `nil`) can differ from its state at `asOf`; `nil` when it never can.
    ///
    /// A fold reads the moment only by comparing it with dates the facts carry (signing times,
    /// purchase, expiry, revocation and grace dates, and effective times, which are the least
    /// of those), so its result is the same for every moment between two consecutive such dates.
    /// A date `d` can change the answer at `d` (`d <= t`, `t < d`) or at `d + 1` (`d < t`), so the
    /// state at `asOf` holds until the least date after `asOf`, or `asOf + 1` when a date equals
    /// `asOf`. A stored group snapshot is served for the moments in between
    /// (`ProjectionSnapshots` in the `SeatLedger` module); the property is tested over the
    /// sample streams and simulated groups (`GroupStateValidityTests`).
    public static func nextChange(after asOf: EpochMillis, facts: [EventFacts]) -> EpochMillis? {
        var next: EpochMillis?
        func consider(_ date: EpochMillis?) {
            guard let date, date >= asOf else { return }
            let change = date > asOf ? date : asOf.saturatingAdd(1)
            if next.map({ change < $0 }) ?? true { next = change }
        }
        for fact in facts {
            consider(fact.occurredAt)
            for tx in fact.transactions {
                consider(tx.purchaseDate)
                consider(tx.expiresDate)
                consider(tx.revocationDate)
                consider(tx.signedDate)
            }
            for renewal in fact.renewals {
                consider(renewal.gracePeriodExpiresDate)
                consider(renewal.signedDate)
            }
        }
        return next
    }
}
