import Foundation

/// Threads of their own for work that blocks its thread until something outside answers (a
/// webhook post: `URLSessionTransport` waits on a semaphore), run from async code.
///
/// Neither the threads async tasks share nor Dispatch's global queues may carry such work: on
/// Linux both are the same few threads, and posts blocking them stalled `serve`'s access
/// derivation, its sender and every timer for seconds (bench step 8's latency stalls, issue #47).
/// Jobs wait in one queue of bounded capacity and run in arrival order on the first free thread.
public final class BlockingThreads: Sendable {
    private let jobs: BoundedChannel<@Sendable () -> Void>

    /// Starts `count` threads (at least one) named `name-N`, taking jobs from a queue of at most
    /// `capacity` waiting jobs.
    public init(count: Int, name: String, capacity: Int = 4_096) {
        jobs = BoundedChannel(capacity: max(1, capacity))
        for index in 0..<max(1, count) {
            let jobs = self.jobs
            Thread.named("\(name)-\(index)") {
                while let job = try? jobs.receive() { job() }
            }.start()
        }
    }

    /// Runs `body` on one of the threads and suspends the caller until it returns or throws.
    /// Throws `CancellationError` without running it once ``close()`` was called. While
    /// `capacity` jobs already wait, the call blocks its thread until one is taken.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let taken = jobs.send { continuation.resume(with: Result { try body() }) }
            if !taken { continuation.resume(throwing: CancellationError()) }
        }
    }

    /// Takes no more jobs; the threads finish the ones queued and exit.
    public func close() {
        jobs.close()
    }
}
