import Foundation
import LedgerConcurrency
import Testing

/// `ThreadPriority`: a thread puts itself under `SCHED_IDLE`, read back from the kernel, and no other thread.
@Suite("ThreadPriority")
struct ThreadPriorityTests {
    /// The scheduling policy of the calling thread as the kernel reports it (`/proc/thread-self/stat`, field 41).
    static func policyReportedByTheKernel() -> Int? {
        guard let stat = try? String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after the command: state is field 3, policy field 41.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 38 ? Int(fields[38]) : nil
    }

    @Test("a thread put under SCHED_IDLE is reported so by the kernel (policy 5); the thread that started it keeps policy 0")
    func onlyTheCallingThread() throws {
        #expect(!ThreadPriority.currentRunsOnlyWhenIdle)
        let outcome = OneShot<(Bool, Bool, Int?)>()
        Thread {
            let took = ThreadPriority.runCurrentOnlyWhenIdle()
            outcome.set((took, ThreadPriority.currentRunsOnlyWhenIdle, Self.policyReportedByTheKernel()))
        }.start()
        let (took, idle, reported) = outcome.wait()
        #expect(took && idle)
        #expect(reported == 5)
        #expect(!ThreadPriority.currentRunsOnlyWhenIdle)
        #expect(Self.policyReportedByTheKernel() == 0)
    }
}
