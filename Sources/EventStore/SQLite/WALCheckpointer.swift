import CSQLite
import Foundation

/// Copies the write-ahead log into the database file on a thread and connection of its own while
/// a long ingest appends, so the writer does not stop for it.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses 1,000 WAL frames: it copies
/// those pages into the database file and `fsync`s both files before the commit returns. During a
/// 100,000-notification ingest that was 187 checkpoints and ~3.8 s of `fdatasync` on the writer
/// thread, out of 26 s, while the other core waited for the writer. Here a hook on the writer
/// (``install(on:)``) only signals this thread, which runs a `PASSIVE` checkpoint: it copies what
/// no reader still needs and never blocks the writer. If the log still grows past
/// ``hardLimitFrames`` (the checkpoint cannot keep up), the writer checkpoints itself, as before.
///
/// Durability is unchanged: every commit is `fsync`ed in the WAL by the writer
/// (`synchronous = FULL`); the checkpoint only moves committed pages into the main file.
final class WALCheckpointer: @unchecked Sendable {
    // @unchecked Sendable: `requested`, `stopping` and `finished` are only touched while holding
    // `condition`'s lock; `connection` is created in init and used by the checkpoint thread alone.
    private let condition = NSCondition()
    private var requested = false
    private var stopping = false
    private var finished = false
    private let connection: SQLiteConnection
    private var thread: Thread?

    /// WAL frames after which the checkpoint thread is woken (SQLite's own default threshold).
    static let thresholdFrames: Int32 = 1_000
    /// WAL frames after which the writer checkpoints itself (256 MiB at 16 KiB pages).
    static let hardLimitFrames: Int32 = 16_000

    /// Opens a second connection to the ledger file at `path` and starts the checkpoint thread.
    init(path: String) throws(SQLiteError) {
        connection = try SQLiteConnection(path: path, create: false)
        connection.setBusyTimeout(milliseconds: 30_000)
        // The checkpoint's fsyncs follow this connection's setting: as durable as the writer's.
        try connection.execute("PRAGMA synchronous = FULL")
        let thread = Thread { [self] in run() }
        thread.name = "seatledger.wal.checkpoint"
        self.thread = thread
        thread.start()
    }

    private func run() {
        defer {
            condition.lock()
            finished = true
            condition.broadcast()
            condition.unlock()
        }
        while true {
            condition.lock()
            while !requested && !stopping { condition.wait() }
            let work = requested
            requested = false
            condition.unlock()
            guard work else { return }
            // PASSIVE: copy what can be copied without waiting for anyone; a busy or failed
            // checkpoint is only deferred (the next request, or the writer's own, retries it).
            _ = sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        }
    }

    /// Asks for a checkpoint soon (requests while one runs coalesce into one more).
    func request() {
        condition.lock()
        requested = true
        condition.signal()
        condition.unlock()
    }

    /// Finishes the checkpoint in progress (and one requested before this call), then stops.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
        thread = nil
    }

    /// Routes `writer`'s commits to this checkpointer instead of SQLite's automatic checkpoint,
    /// until ``uninstall(from:)``. The checkpointer must outlive the installation.
    func install(on writer: SQLiteConnection) {
        sqlite3_wal_hook(writer.handle, { context, database, _, frames in
            guard let context else { return SQLITE_OK }
            let checkpointer = Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue()
            if frames >= WALCheckpointer.hardLimitFrames {
                // The background checkpoint fell behind: the writer catches up itself.
                _ = sqlite3_wal_checkpoint_v2(database, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            } else if frames >= WALCheckpointer.thresholdFrames {
                checkpointer.request()
            }
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Gives `writer` back SQLite's automatic checkpoint (every 1,000 frames).
    func uninstall(from writer: SQLiteConnection) {
        sqlite3_wal_autocheckpoint(writer.handle, WALCheckpointer.thresholdFrames)
    }
}
