import Foundation
import LedgerConcurrency

/// The threads request handlers run on: a `TaskExecutor` of the server's own.
///
/// Handlers are `async` and mostly wait (for a ledger commit, a read, a long-poll), which costs
/// no thread; what they do run, they run here rather than on Swift's global cooperative pool,
/// so a process whose pool is busy or blocked elsewhere (an embedding app, a test runner) still
/// answers requests. The threads end when ``shutdown()`` is called and the queue is empty.
///
/// `@unchecked Sendable` is safe: `jobs` and `stopped` are read and written only while holding
/// `condition`.
final class HandlerExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var head = 0
    private var stopped = false
    private var running = 0

    init(threads: Int, name: String) {
        for index in 0..<max(1, threads) {
            let thread = Thread.named("\(name)-\(index)") { [self] in work() }
            running += 1
            thread.start()
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        if running == 0 {
            // Every thread has ended (after shutdown): a late job still runs, on a thread of its own.
            condition.unlock()
            Thread { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }.start()
            return
        }
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while head == jobs.count, !stopped { condition.wait() }
            if head == jobs.count {
                running -= 1
                condition.unlock()
                return
            }
            let job = jobs[head]
            head += 1
            if head > 1_024, head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// Lets the threads finish the queued jobs and end.
    func shutdown() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }
}
