import Foundation
import LedgerConcurrency

/// Threads of their own for webhook posts, which block their thread until the answer comes
/// (`URLSessionTransport` waits on a semaphore). Neither the threads async tasks share nor
/// Dispatch's global queues may carry them: on Linux both are the same few threads, and posts
/// blocking them stalled the derivation, the sender and every timer of the service for seconds
/// (bench step 8's latency stalls).
final class PostingThreads: Sendable {
    private let jobs: BoundedChannel<@Sendable () -> Void>

    /// Starts `count` threads named `sl-webhook-N`.
    init(count: Int) {
        jobs = BoundedChannel(capacity: 4_096)
        for index in 0..<max(1, count) {
            let jobs = self.jobs
            Thread.named("sl-webhook-\(index)") {
                while let job = try? jobs.receive() { job() }
            }.start()
        }
    }

    /// Runs `body` on one of the threads and suspends the caller until it returns.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let taken = jobs.send { continuation.resume(with: Result { try body() }) }
            if !taken { continuation.resume(throwing: CancellationError()) }
        }
    }

    /// Lets the threads finish what they hold and exit.
    func close() {
        jobs.close()
    }
}
