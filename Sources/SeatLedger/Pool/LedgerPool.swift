import Foundation
import LedgerConcurrency
import LedgerIntake
import LedgerStorage

/// A `Sendable` handle on a ledger for servers: one writer that group-commits concurrent appends,
/// a pool of read connections, and `async` methods that never block Swift's cooperative threads.
///
/// ```swift
/// let pool = try LedgerPool.open(path: "/var/lib/reps/ledger.sqlite", readers: 4)
/// let handler: @Sendable (Data) async throws -> Bool = { body in
///     let outcome = try await pool.append(notificationBody: body, source: "webhook")
///     return outcome.isSettled                           // durable: safe to answer 200
/// }
/// let access = try await pool.read { ledger in
///     try ledger.groupState("2000000000000001", asOf: .millis(Date())).members.filter(\.hasAccess).count
/// }
/// await pool.close()
/// ```
///
/// - **Verifiers**: one thread per core verifies and decodes each append's messages and hands
///   them to the writer, so the writer never waits for signatures while it could be committing.
/// - **Writer**: one dedicated thread owns the one read-write ``Ledger``. Each time it is free it
///   takes everything queued and commits all the appends together: one
///   transaction and one `fsync` for whatever arrived while the previous commit ran. Each message
///   is verified on its own, so one message's bad bytes are quarantined while its batch-mates are
///   appended; an error of the whole batch (say the disk is full) goes to every caller in it, and
///   none of the batch is stored.
/// - **Readers**: `readers` dedicated threads, each owning a read-only ``Ledger`` (SQLite WAL
///   readers: each statement sees the last committed transaction, so a read that starts after an
///   `append` returned sees it).
/// - **Background reader**: one more read-only ``Ledger`` on a thread under `SCHED_IDLE`
///   (``backgroundRead(_:)``), for derived work that can wait (`serve` plans access transitions
///   there).
/// - **Why threads, not tasks**: the ledger's work is blocking (SQLite and libpq calls, `fsync`),
///   and a task blocking a cooperative thread holds one of only as many threads as cores. Callers
///   suspend on a continuation (resumed exactly once) while dedicated threads do the blocking.
///
/// Calls are not cancellable once submitted: an append that was queued is committed (and its
/// outcome is durable) even if the calling task is cancelled.
public final class LedgerPool: Sendable {
    private let writer: LedgerPoolWriter
    private let verifiers: LedgerPoolVerifiers
    private let readers: LedgerPoolReaders
    /// One more read connection, on a thread that runs only when a core is idle (``backgroundRead(_:)``).
    private let background: LedgerPoolReaders
    private let watch: LedgerHeadWatch
    /// How many read connections the pool has for requests (the background reader not counted).
    public let readerCount: Int

    private init(writer: LedgerPoolWriter, verifiers: LedgerPoolVerifiers, readers: LedgerPoolReaders, background: LedgerPoolReaders,
                 watch: LedgerHeadWatch, readerCount: Int) {
        self.writer = writer
        self.verifiers = verifiers
        self.readers = readers
        self.background = background
        self.watch = watch
        self.readerCount = readerCount
    }

    deinit {
        // Without a `close()` the threads would wait for work forever: let them finish and exit.
        verifiers.close()
        writer.close()
        readers.close()
        background.close()
        watch.close()
    }

    /// Opens the ledger at `path` (a SQLite file, or a `postgresql://` URL once `PostgresLedgerEngine.register()`
    /// of the SeatLedgerPostgres product has run) with `readers` read connections.
    ///
    /// Waits until every connection is open, so call it at startup, not from a task that must not block.
    public static func open(path: String, readers: Int = 4) throws -> LedgerPool {
        try open(path: path, readers: readers, headRecheckInterval: defaultHeadRecheckInterval)
    }

    /// Opens the ledger at `path` with `readers` read connections; ``waitForHead(after:timeout:)``
    /// re-reads the store's head (for other processes' appends) at most every `headRecheckInterval`.
    public static func open(path: String, readers: Int = 4, headRecheckInterval: Duration) throws -> LedgerPool {
        let location = StoreLocation(path)
        return try open(readers: readers, headRecheckInterval: headRecheckInterval) { readOnly in
            try location.open(readOnly: readOnly)
        }
    }

    /// Opens over an already-built store factory: `makeStore(readOnly)` returns a new connection each call.
    public static func open(readers: Int, makeStore: @escaping @Sendable (_ readOnly: Bool) throws -> any LedgerStore) throws -> LedgerPool {
        try open(readers: readers, headRecheckInterval: defaultHeadRecheckInterval, makeStore: makeStore)
    }

    /// Opens over a store factory, with the interval at which ``waitForHead(after:timeout:)``
    /// re-reads the store's head while anyone waits (another process's appends are seen within it).
    public static func open(readers: Int, headRecheckInterval: Duration,
                            makeStore: @escaping @Sendable (_ readOnly: Bool) throws -> any LedgerStore) throws -> LedgerPool {
        let watch = LedgerHeadWatch(recheckInterval: headRecheckInterval)
        let (writer, decoder) = try LedgerPoolWriter.start(watch: watch, makeStore: makeStore)
        let readerPool: LedgerPoolReaders
        let background: LedgerPoolReaders
        do {
            readerPool = try LedgerPoolReaders.start(count: readers, makeStore: makeStore)
            do {
                background = try LedgerPoolReaders.start(count: 1, name: "sl-pool-bg", onlyWhenIdle: true, makeStore: makeStore)
            } catch {
                readerPool.close()
                throw error
            }
        } catch {
            writer.close()
            watch.close()
            throw error
        }
        watch.start(recheck: { [weak readerPool] in
            guard let readerPool else { return false }
            return readerPool.submit { ledger in
                do {
                    watch.advance(to: try ledger.store.head().position)
                    return nil
                } catch {
                    return error
                }
            }
        })
        return LedgerPool(writer: writer, verifiers: LedgerPoolVerifiers(decoder: decoder, writer: writer), readers: readerPool,
                          background: background, watch: watch, readerCount: max(1, readers))
    }

    /// The default interval of the store-head re-check behind ``waitForHead(after:timeout:)``.
    public static let defaultHeadRecheckInterval: Duration = .seconds(1)

    // MARK: Appending

    /// Appends one notification body exactly as Apple POSTed it (origin `webhook`, as
    /// ``Ledger/append(notificationBody:source:)``), durable when it returns; concurrent calls are
    /// group-committed.
    public func append(notificationBody: Data, source: String) async throws -> MessageOutcome {
        try await append([InboundMessage(raw: notificationBody, source: source, origin: .webhook)])[0]
    }

    /// Appends several messages (one InboundMessage each) in the group commit; outcomes in order.
    public func append(_ messages: [InboundMessage]) async throws -> [MessageOutcome] {
        try await appendReceipts(messages).map(\.outcome)
    }

    /// Appends several messages in the group commit, like ``append(_:)``, and says for each which
    /// event it is (for a log line or a response: no read needed).
    ///
    /// The messages are verified and decoded on the pool's verifier threads, then committed by the
    /// writer together with whatever else is queued.
    public func appendReceipts(_ messages: [InboundMessage]) async throws -> [AppendReceipt] {
        if messages.isEmpty { return [] }
        return try await withCheckedThrowingContinuation { continuation in
            if !verifiers.submit(.init(messages: messages, completion: { continuation.resume(with: $0) })) {
                continuation.resume(throwing: LedgerPoolError.closed)
            }
        }
    }

    /// Verifies and decodes `messages` on the calling thread, queues them for the next group
    /// commit and returns at once; `completion` is called once, on the writer's thread, with
    /// their receipts when their outcomes are durable (or the error of their group commit, or
    /// ``LedgerPoolError/closed`` at once when the pool takes no work): keep it short, it delays
    /// the next commit.
    ///
    /// For a server's own threads that must not wait for the commit (libmicrohttpd's polling
    /// threads): the verification runs where the request arrived, and the answer goes back from
    /// the writer, with no task and no verifier thread in between (``appendReceipts(_:)`` hands
    /// the work to a task, a verifier, the writer and back). `serve`'s `POST /notifications` uses it.
    public func appendReceipts(_ messages: [InboundMessage], completion: @escaping @Sendable (Result<[AppendReceipt], any Error>) -> Void) {
        if messages.isEmpty { return completion(.success([])) }
        if !verifiers.prepareHere(messages, completion: completion) { completion(.failure(LedgerPoolError.closed)) }
    }

    // MARK: Reading and exclusive work

    /// Runs `body` with a read-only `Ledger` from the pool on a pool thread (never a cooperative thread).
    ///
    /// On SQLite `body` runs in one read snapshot: every statement sees the same commit (so it
    /// must not start a transaction of its own). The ledger belongs to the pool: do not keep it
    /// after `body` returns.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Ledger) throws -> T) async throws -> T {
        try await Self.run(body) { readers.submit($0) }
    }

    /// Runs `body` like ``read(_:)``, but on the pool's background reader: a connection and a
    /// thread of its own that runs only when a core has nothing else to run (`SCHED_IDLE`:
    /// ``ThreadPriority``). For derived work that can wait (`serve`'s access derivation): while
    /// the cores are busy with appends and requests it waits, and it never takes a connection a
    /// request is waiting for; when they are not, it runs at once. One job at a time, in order.
    /// Under load that never lets up it may wait indefinitely: a caller that must finish uses
    /// ``read(_:)``.
    public func backgroundRead<T: Sendable>(_ body: @escaping @Sendable (Ledger) throws -> T) async throws -> T {
        try await Self.run(body) { background.submit($0) }
    }

    /// Runs `body` with a read-only `Ledger` from the pool on the calling thread, blocking it until
    /// a read connection is free: for threads of the caller's own that may block (an HTTP
    /// server's polling threads), never from a task (use ``read(_:)`` there).
    ///
    /// The same connections and the same read snapshot as ``read(_:)``, without handing the work
    /// to a pool thread and back: `serve` answers `GET /v1/members/{id}` and `GET /v1/groups/{ref}`
    /// this way, because the four thread wake-ups of a hand-over (to the handler's task, to a
    /// reader, back, and back to libmicrohttpd) cost more CPU than a short read itself. Throws
    /// ``LedgerPoolError/closed`` once ``close()`` was called. The ledger belongs to the pool: do
    /// not keep it after `body` returns.
    public func blockingRead<T>(_ body: (Ledger) throws -> T) throws -> T {
        guard !isClosed else { throw LedgerPoolError.closed }
        return try readers.lend(body)
    }

    /// Runs `body` on the single writer, exclusively, between group commits.
    ///
    /// For what appends cannot do: recording API responses with their origin, `quarantine retry`,
    /// configuration changes. The ledger belongs to the pool: do not keep it after `body` returns.
    public func write<T: Sendable>(_ body: @escaping @Sendable (Ledger) throws -> T) async throws -> T {
        try await Self.run(body) { writer.submit(.exclusive($0)) }
    }

    /// Hands `body` to a pool thread through `submit` and suspends until it ran: its result or
    /// error resumes the caller exactly once (``LedgerPoolError/closed`` when the pool took nothing).
    /// The job returns the error, if any, so the thread can tell a failed body from a good one.
    private static func run<T: Sendable>(_ body: @escaping @Sendable (Ledger) throws -> T,
                                          submit: (@escaping @Sendable (Ledger) -> (any Error)?) -> Bool) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let submitted = submit { ledger in
                do {
                    continuation.resume(returning: try body(ledger))
                    return nil
                } catch {
                    continuation.resume(throwing: error)
                    return error
                }
            }
            if !submitted { continuation.resume(throwing: LedgerPoolError.closed) }
        }
    }

    // MARK: The head

    /// The ledger head position as of the last commit (cheap, no I/O).
    ///
    /// The last commit of this pool's writer, or a later head read from the store (another
    /// process's appends) by ``waitForHead(after:timeout:)``'s re-check.
    public var headPosition: Int64 { watch.head }

    /// Waits until the ledger head is past `position` or `timeout` has passed; returns the head then
    /// (still `<= position` on a timeout or once the pool is closed).
    ///
    /// This pool's commits wake the waiters at once; another process's appends are seen by a
    /// re-check of the store's head at most every `headRecheckInterval` (default 1 s) while anyone
    /// waits. Suspends the task; no thread waits.
    public func waitForHead(after position: Int64, timeout: Duration) async -> Int64 {
        await watch.wait(after: position, deadline: .now.advanced(by: timeout))
    }

    /// Ends every ``waitForHead(after:timeout:)`` now, each returning the head as it is, and
    /// makes later ones return at once; the pool keeps working otherwise.
    ///
    /// A stopping service calls it before draining its requests: a long poll waits up to a
    /// minute, and a drain that waited for it would outlast its own timeout.
    public func endLongPolls() {
        watch.close()
    }

    // MARK: Statistics and closing

    /// What the writer has done since the pool opened (e.g. how many appends each commit grouped).
    public var statistics: Statistics { writer.statistics }

    /// Calls waiting for the writer now (appends and exclusive writes not yet taken): a load gauge.
    public var queuedWrites: Int { writer.queued }

    /// Whether ``close()`` has been called (the pool takes no new work).
    public var isClosed: Bool { verifiers.isClosed }

    /// Stops accepting work, finishes what was submitted, closes connections.
    ///
    /// Work submitted before `close` completes normally; later calls throw ``LedgerPoolError/closed``.
    /// Waiters in ``waitForHead(after:timeout:)`` return the head as it is. Calling it again waits
    /// for the same shutdown.
    public func close() async {
        verifiers.close()
        readers.close()
        background.close()
        // The verifiers hand what they took to the writer, so the writer closes after them.
        await verifiers.waitUntilExited()
        writer.close()
        await writer.waitUntilExited()
        await readers.waitUntilExited()
        await background.waitUntilExited()
        watch.close()
        await watch.waitUntilExited()
    }
}
