import Foundation
import LedgerConcurrency
import Testing

/// `ThreadName` and `Thread.named`: the name the system shows, read back through procfs.
@Suite("ThreadName")
struct ThreadNameTests {
    /// The names of this process's threads as the system shows them (`/proc/self/task/*/comm`).
    static func systemThreadNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .newlines)
        }
    }

    @Test("a thread started with Thread.named shows its name to the system while it runs, and Foundation's name is the same")
    func namedThreadIsSeen() throws {
        let running = OneShot<(String?, String?)>()
        let release = OneShot<Void>()
        let thread = Thread.named("sl-test-named") {
            running.set((ThreadName.current(), Thread.current.name))
            release.wait()
        }
        thread.start()
        let (seen, foundation) = running.wait()
        #expect(seen == "sl-test-named")
        #expect(foundation == "sl-test-named")
        #expect(try Self.systemThreadNames().contains("sl-test-named"))
        release.set(())
    }

    @Test("names longer than 15 bytes keep their first 15, never half a character", arguments: [
        ("sl-a-name-of-twenty-bytes", "sl-a-name-of-tw"),
        ("exactly-15-byte", "exactly-15-byte"),
        ("sl-fourteen-é…", "sl-fourteen-é"),  // "é" ends at byte 14; "…" (3 bytes) does not fit
    ])
    func longNamesAreCut(name: String, shown: String) throws {
        let result = onThread {
            let took = ThreadName.setCurrent(name)
            return (took, ThreadName.current())
        }.wait()
        #expect(result.0)
        #expect(result.1 == shown)
        #expect(shown.utf8.count <= ThreadName.maximumBytes)
    }
}
