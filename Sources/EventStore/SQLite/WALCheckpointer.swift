import CSQLite
import Foundation
import LedgerConcurrency
import LedgerStorage

/// Copies the write-ahead log into the database file on a thread and connection of its own while
/// a long ingest appends, so the writer does not stop for it.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses 1,000 WAL frames: it copies
/// those pages into the database file and `fsync`s both files before the commit returns, while
/// the other cores wait for the writer. Here a hook on the writer
/// (``install(on:)``) only signals this thread, which runs a `PASSIVE` checkpoint: it copies what
/// no reader still needs and never blocks the writer.
///
/// A background checkpoint cannot restart the log while commits keep coming (the log restarts
/// when a writer begins after *every* frame was copied, and the next commit always lands first).
/// So once the log reaches ``hardLimitFrames`` the writer checkpoints itself inside the hook: by
/// then the thread has copied all but the latest commits' frames, so this costs the writer little,
/// and its next transaction restarts the log. The log therefore stays under about
/// ``hardLimitFrames`` plus one batch.
///
/// Durability is unchanged: every commit is `fsync`ed in the WAL by the writer
/// (`synchronous = FULL`); a checkpoint only moves committed pages into the main file.
///
/// `Sendable` without `@unchecked`: the flags and counts live in the kit's ``Monitor``, and the
/// second connection goes to the checkpoint thread in a ``Handoff`` (that thread alone uses it).
final class WALCheckpointer: Sendable {
    private struct State: Sendable {
        var requested = false
        var stopping = false
        var finished = false
        var counts = Counts()
    }
    private let state = Monitor(State())

    /// WAL frames after which the checkpoint thread is woken (SQLite's own default threshold).
    let thresholdFrames: Int32
    /// WAL frames after which the writer checkpoints itself and so restarts the log.
    let hardLimitFrames: Int32

    /// The default ``thresholdFrames``.
    static let defaultThresholdFrames: Int32 = 1_000
    /// The default ``hardLimitFrames``: 64 MiB of log at 16 KiB pages.
    static let defaultHardLimitFrames: Int32 = 4_000

    /// What happened so far (for tests and diagnostics).
    struct Counts: Sendable, Equatable {
        /// Checkpoints run by the checkpoint thread.
        var background = 0
        /// Checkpoints the writer ran itself at the hard limit.
        var writer = 0
        /// The most frames the log held after a commit.
        var largestLog: Int32 = 0
    }

    /// What happened so far.
    var statistics: Counts { state.withLock { $0.counts } }

    /// Opens a second connection to the ledger file at `path` and starts the checkpoint thread.
    init(path: String, thresholdFrames: Int32 = defaultThresholdFrames,
         hardLimitFrames: Int32 = defaultHardLimitFrames) throws(SQLiteError) {
        self.thresholdFrames = thresholdFrames
        self.hardLimitFrames = hardLimitFrames
        let connection = try SQLiteConnection(path: path, create: false)
        connection.setBusyTimeout(milliseconds: 30_000)
        // The checkpoint's fsyncs follow this connection's setting: as durable as the writer's.
        // The pragma also reads the schema, which is what puts this connection in WAL mode:
        // without that, a checkpoint on it would do nothing and still return SQLITE_OK.
        try connection.execute("PRAGMA synchronous = FULL")
        guard try connection.scalarText("PRAGMA journal_mode") == "wal" else {
            throw SQLiteError(resultCode: SQLITE_MISUSE, message: "background checkpoints need a ledger in WAL mode", path: path)
        }
        let handOver = Handoff(connection)
        let thread = Thread.named("sl-checkpoint") { [self] in
            do {
                let connection = handOver.take()
                run(on: connection)
            }
            // The connection is released at the end of the scope above, so it is closed by the
            // time `stop()` returns.
            state.update { $0.finished = true }
        }
        thread.start()
    }

    private func run(on connection: SQLiteConnection) {
        while true {
            let work = state.wait(until: { $0.requested || $0.stopping }) { state -> Bool in
                defer { state.requested = false }
                return state.requested
            }
            guard work else { return }
            // PASSIVE: copy what can be copied without waiting for anyone; a busy or failed
            // checkpoint is only deferred (the next request, or the writer's own, retries it).
            _ = sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            state.withLock { $0.counts.background += 1 }
        }
    }

    /// Called by the writer's hook after each commit with the frames in the log.
    fileprivate func committed(frames: Int32, writer database: OpaquePointer?) {
        state.withLock { $0.counts.largestLog = max($0.counts.largestLog, frames) }
        if frames >= hardLimitFrames {
            // The thread has copied all but the latest commits: the writer copies the rest, and
            // its next transaction restarts the log.
            _ = sqlite3_wal_checkpoint_v2(database, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            state.withLock { $0.counts.writer += 1 }
        } else if frames >= thresholdFrames {
            request()
        }
    }

    /// Asks for a checkpoint soon (requests while one runs coalesce into one more).
    func request() { state.update { $0.requested = true } }

    /// Finishes the checkpoint in progress (and one requested before this call), then stops.
    func stop() {
        state.update { $0.stopping = true }
        state.wait(until: { $0.finished }) { _ in }
    }

    /// Routes `writer`'s commits to this checkpointer instead of SQLite's automatic checkpoint,
    /// until ``uninstall(from:)``. The checkpointer must outlive the installation.
    func install(on writer: SQLiteConnection) {
        sqlite3_wal_hook(writer.handle, { context, database, _, frames in
            guard let context else { return SQLITE_OK }
            Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue().committed(frames: frames, writer: database)
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Gives `writer` back SQLite's automatic checkpoint (every 1,000 frames).
    func uninstall(from writer: SQLiteConnection) {
        sqlite3_wal_autocheckpoint(writer.handle, WALCheckpointer.defaultThresholdFrames)
    }
}
