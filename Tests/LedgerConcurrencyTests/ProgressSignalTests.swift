import LedgerConcurrency
import Testing

/// `ProgressSignal`: a wait returns once the value passes it, at its timeout with the value
/// unchanged, or at once after `close()`.
@Suite("ProgressSignal")
struct ProgressSignalTests {
    @Test("a waiter gets the value of the advance that passes it (an advance to its own value does not)")
    func advanceResumes() async {
        let signal = ProgressSignal()
        signal.advance(to: 3)
        async let waited = signal.wait(after: 5, timeout: .seconds(60))
        signal.advance(to: 5)
        signal.advance(to: 9)
        #expect(await waited == 9)
    }

    @Test("a value already past the wait returns at once; a value that never passes returns at the timeout, unchanged")
    func immediateAndTimeout() async {
        let signal = ProgressSignal()
        signal.advance(to: 7)
        #expect(await signal.wait(after: 6, timeout: .seconds(60)) == 7)
        #expect(await signal.wait(after: 7, timeout: .milliseconds(10)) == 7)
        signal.bump()
        #expect(signal.value == 8)
    }

    @Test("close resumes every waiter and makes later waits return at once")
    func closeResumes() async {
        let signal = ProgressSignal()
        async let waited = signal.wait(after: 0, timeout: .seconds(60))
        await Task.yield()
        signal.close()
        #expect(await waited == 0)
        #expect(await signal.wait(after: 100, timeout: .seconds(60)) == 0)
    }
}
