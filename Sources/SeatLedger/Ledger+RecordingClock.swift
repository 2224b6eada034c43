import AppStoreModels

extension Ledger {
    /// The time the ledger's clock gives now: what an event appended now is recorded at
    /// (`recordedAt`, the time `--known-at` compares).
    public func recordingTime() -> EpochMillis {
        store.clock()
    }

    /// Records every later append at the times `clock` gives instead of the wall clock: for
    /// a replay of old input (the demo) whose knowledge times should follow its signed times.
    public func useRecordingClock(_ clock: @escaping @Sendable () -> EpochMillis) {
        store.clock = clock
    }
}
