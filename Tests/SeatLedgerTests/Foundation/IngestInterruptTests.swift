import AppStoreModels
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A signal stops an ingest whose input is open but quiet (a pipe, a FIFO): the batch in hand is
/// committed and the command says it was interrupted, at once rather than at the writer's EOF.
@Suite("ingest: SIGINT while the input stays open")
struct IngestInterruptTests {
    @Test("SIGINT during an ingest of a FIFO whose writer stays open and quiet: exit 4, \"interrupted\": true, what it committed is what it says")
    func quietPipe() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let line = try factory.notification(type: "SUBSCRIBED", subtype: "INITIAL_BUY", transaction: factory.transaction())
        let fifo = test.directory.path("input.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let running = try CLI.start(["ingest", "--db", test.path, fifo, "--json"])
        // Opening the write end waits for the ingest to open the read end: the two meet here.
        let writer = try #require(FileHandle(forWritingAtPath: fifo))
        defer { try? writer.close() }
        writer.write(Data((line + "\n").utf8))
        // The line has left the pipe once the ingest's reading thread has read it.
        var unread: Int32 = 1
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, running.isRunning, ioctl(writer.fileDescriptor, UInt(FIONREAD), &unread) == 0, unread > 0 {
            Thread.sleep(forTimeInterval: 0.005)
        }
        #expect(unread == 0)
        running.kill(SIGINT)
        // The writer is still open: before the fix the ingest waited for its EOF (this wait's timeout).
        let result = try running.wait(timeout: 20)
        #expect(result.exitCode == 4, "\(result)")
        #expect(result.stderr.contains("stopping…"), "\(result)")
        let summary = try result.json()
        #expect(summary["interrupted"] == true, "\(summary)")
        let appended = try #require(summary["appended"]?.int64Value)
        let stored = try test.eventCount()
        #expect(appended <= 1 && appended == stored, "\(summary)")
    }
}
