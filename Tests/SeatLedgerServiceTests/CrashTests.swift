import AppStoreModels
import EventStore
import Foundation
import HTTPTestSupport
import LedgerStorage
import Synchronization
import Testing

@Suite("serve: kill -9 under load loses no acknowledged notification", .serialized)
struct CrashTests {
    @Test("16 connections, kill -9 mid-stream, restart, resend the rest: every acknowledged notification stored exactly once, verify passes")
    func killUnderLoad() async throws {
        let fixture = try LedgerFixture()
        let count = 600
        let bodies = try Notifications.subscribed(count: count, offset: 10_000)
        let load = LoadState()
        let first = try ServeProcess(db: fixture.path)
        let port = first.port
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    try await onThread {
                        guard let client = try? RawHTTPClient(port: port) else { return }
                        while !load.killed.load(ordering: .relaxed) {
                            let index = load.next.add(1, ordering: .relaxed).oldValue
                            guard index < count else { return }
                            guard let response = try? client.request("POST", "/notifications", body: bodies[index]) else { return }
                            if response.status == 200 { _ = load.acknowledged.withLock { $0.insert(index) } }
                        }
                    }
                }
            }
            group.addTask {
                try await onThread {
                    _ = waitUntil(timeout: .seconds(120)) { load.acknowledged.withLock { $0.count } >= count / 3 }
                    first.stop(signal: SIGKILL)
                    load.killed.store(true, ordering: .relaxed)
                }
            }
            try await group.waitForAll()
        }
        let before = load.acknowledged.withLock { $0 }
        #expect(before.count >= count / 3 && before.count < count, "acknowledged \(before.count) before the kill")
        let stored = try EventStore.open(at: fixture.path, readOnly: true)
        for index in before { #expect(try stored.event(id: Self.uuid(index)) != nil, "acknowledged \(index) lost") }

        let second = try ServeProcess(db: fixture.path)
        let restartPort = second.port
        try await onThread {
            let client = try RawHTTPClient(port: restartPort)
            for index in 0..<count where !before.contains(index) {
                #expect(try client.request("POST", "/notifications", body: bodies[index]).status == 200)
            }
        }
        #expect(second.stop() == 0)
        let store = try EventStore.open(at: fixture.path, readOnly: true)
        #expect(try store.eventCount() == Int64(count))
        for index in 0..<count { #expect(try store.event(id: Self.uuid(index)) != nil) }
        let verify = try CLIRun.run(["verify", "--db", fixture.path])
        #expect(verify.status == 0, "\(verify.text)\(verify.stderr)")
    }

    static func uuid(_ index: Int) -> String { "00000000-0000-4000-8000-\(String(format: "%012d", 10_000 + index))" }
}

/// What the load's client threads share.
final class LoadState: Sendable {
    let acknowledged = Mutex(Set<Int>())
    let next = Atomic<Int>(0)
    let killed = Atomic<Bool>(false)
}
