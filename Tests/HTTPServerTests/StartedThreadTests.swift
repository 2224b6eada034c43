import Dispatch
import HTTPTestSupport
import Synchronization
import Testing

/// `StartedThread`, which the service tests use to send a request that must already be in flight
/// by their next line: it must run its body before anybody asks for the value.
@Suite("test support: StartedThread")
struct StartedThreadTests {
    struct Refused: Error, Equatable { let why: String }

    @Test("the body runs before value() is asked for, and value() gives its result, again on a second call")
    func startsAtOnce() async throws {
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let thread = StartedThread { () -> Int in
            started.signal()
            release.wait()
            return 42
        }
        // Nobody has called value(): the body is running anyway, and is held until released.
        let ran = try await onThread { started.wait(timeout: .now() + 30) == .success }
        #expect(ran)
        release.signal()
        #expect(try await thread.value() == 42)
        #expect(try await thread.value() == 42)
    }

    @Test("an error the body throws is what value() throws")
    func bodyError() async throws {
        let thread = StartedThread { () throws -> String in throw Refused(why: "no") }
        await #expect(throws: Refused(why: "no")) { try await thread.value() }
    }
}
