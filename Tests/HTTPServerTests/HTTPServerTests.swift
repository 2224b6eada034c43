import Foundation
import HTTPServer
import HTTPTestSupport
import JWSVerification
import Synchronization
import Testing

/// What the echo handler saw, for assertions on the handler side.
final class Seen: Sendable {
    let requests = Mutex<[String]>([])
    let oversize = Mutex<[OversizeRequest]>([])
}

/// A server whose handler echoes the request as text: `METHOD PATH ?q=… body-bytes`.
func echoServer(_ seen: Seen, configuration: HTTPServerConfiguration = .init(port: 0, threads: 2, maxBodyBytes: 1 << 20)) throws -> HTTPServer {
    try HTTPServer(configuration: configuration) { request in
        seen.requests.withLock { $0.append("\(request.method) \(request.path)") }
        let query = request.query.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        let text = "\(request.method) \(request.path) ?\(query) \(request.body.count) \(request.header("X-Probe") ?? "-")"
        return HTTPResponse(status: 200, contentType: "text/plain", text: text)
    } oversize: { report in
        seen.oversize.withLock { $0.append(report) }
        return HTTPResponse(status: 413, contentType: "application/json", text: #"{"error":"too large"}"#)
    }
}

@Suite("HTTPServer on libmicrohttpd")
struct HTTPServerTests {
    @Test("a port in use is an error naming libmicrohttpd's reason; nothing of it reaches stderr or the running log")
    func portInUse() async throws {
        try await onThread {
            let logged = Mutex<[String]>([])
            var configuration = HTTPServerConfiguration(port: 0, threads: 2)
            configuration.log = { message in logged.withLock { $0.append(message) } }
            let first = try echoServer(Seen(), configuration: configuration)
            configuration.port = first.port
            let error = #expect(throws: HTTPServerError.self) { try echoServer(Seen(), configuration: configuration) }
            let message = error?.message ?? ""
            #expect(message.hasPrefix("cannot listen on 127.0.0.1:\(first.port): "), "\(message)")
            #expect(message.contains("Address already in use"), "libmicrohttpd's reason is in the error: \(message)")
            #expect(logged.withLock { $0 }.isEmpty, "a failed start's messages are in the error only")
        }
    }

    @Test("one connection carries several requests (keep-alive), with query, headers and body")
    func keepAlive() async throws {
        try await onThread {
            let seen = Seen()
            let server = try echoServer(seen)
            let client = try RawHTTPClient(port: server.port)
            let first = try client.request("GET", "/v1/groups?limit=2&status=active", headers: [("X-Probe", "yes")])
            #expect(first.status == 200)
            #expect(first.text == "GET /v1/groups ?limit=2&status=active 0 yes")
            let second = try client.request("POST", "/notifications", body: Data("hello".utf8))
            #expect(second.text == "POST /notifications ? 5 -")
            #expect(seen.requests.withLock { $0 } == ["GET /v1/groups", "POST /notifications"])
        }
    }

    @Test("pipelined requests sent in one write are answered in order")
    func pipelining() async throws {
        try await onThread {
            let seen = Seen()
            let server = try echoServer(seen)
            let client = try RawHTTPClient(port: server.port)
            var bytes = Data()
            for index in 0..<5 { bytes += RawHTTPClient.requestBytes("GET", "/item/\(index)") }
            try client.send(bytes)
            for index in 0..<5 {
                let response = try client.readResponse()
                #expect(response.text == "GET /item/\(index) ? 0 -")
            }
        }
    }

    @Test("Expect: 100-continue gets 100 before the body, then the answer")
    func expectContinue() async throws {
        try await onThread {
            let seen = Seen()
            let server = try echoServer(seen)
            let client = try RawHTTPClient(port: server.port)
            try client.send("POST /notifications HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
            let interim = try client.readResponse()
            #expect(interim.status == 100)
            try client.send("abcd")
            let final = try client.readResponse()
            #expect(final.status == 200)
            #expect(final.text == "POST /notifications ? 4 -")
        }
    }

    @Test("a body over the limit gets 413, is never handed to the handler, and is reported with its size and SHA-256")
    func oversize() async throws {
        try await onThread {
            let seen = Seen()
            let server = try echoServer(seen)
            let body = Data((0..<(2 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let client = try RawHTTPClient(port: server.port)
            let response = try client.request("POST", "/notifications", body: body)
            #expect(response.status == 413)
            #expect(seen.requests.withLock { $0 }.isEmpty)
            let report = try #require(seen.oversize.withLock { $0 }.first)
            #expect(report.declaredLength == body.count)
            #expect(report.receivedBytes == body.count)
            #expect(report.sha256 == SHA256Digest.hex(body))
        }
    }

    @Test("a body the client declares beyond the discard limit is answered at once, unread")
    func hugeDeclared() async throws {
        try await onThread {
            let seen = Seen()
            let server = try echoServer(seen, configuration: .init(port: 0, threads: 1, maxBodyBytes: 1_000, maxDiscardedBodyBytes: 10_000))
            let client = try RawHTTPClient(port: server.port)
            try client.send("POST /notifications HTTP/1.1\r\nHost: x\r\nContent-Length: 50000000\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 413)
            let report = try #require(seen.oversize.withLock { $0 }.first)
            #expect(report.sha256 == nil && report.declaredLength == 50_000_000)
        }
    }

    @Test("a handler that waits holds no server thread: with one thread another request is answered meanwhile")
    func suspendedHandler() async throws {
        try await onThread {
            let gate = ThreadGate()
            let server = try HTTPServer(configuration: .init(port: 0, threads: 1)) { request in
                if request.path == "/wait" { await gate.wait() }
                return HTTPResponse(status: 200, contentType: "text/plain", text: request.path)
            } oversize: { _ in HTTPResponse(status: 413) }
            let port = server.port
            let slow = inBackground { try RawHTTPClient(port: port).request("GET", "/wait").text }
            #expect(waitUntil(timeout: .seconds(10)) { server.activeRequests == 1 })
            let quick = try RawHTTPClient(port: port).request("GET", "/quick")
            #expect(quick.text == "/quick")
            gate.open()
            #expect(try slow() == "/wait")
        }
    }

    @Test("the immediate handler answers now or later what it takes, the async handler the rest, in order on one keep-alive connection")
    func immediateHandler() async throws {
        try await onThread {
            let threads = Mutex<[String: pthread_t]>([:])  // path → the thread that answered it
            @Sendable func record(_ path: String) { threads.withLock { $0[path] = pthread_self() } }
            let server = try HTTPServer(configuration: .init(port: 0, threads: 1), immediate: { request in
                let text = "\(request.method) \(request.path) \(request.body.count)"
                if request.path.hasPrefix("/now/") {
                    record(request.path)
                    return .response(HTTPResponse(status: 200, contentType: "text/plain", text: "now " + text))
                }
                if request.path.hasPrefix("/soon/") {
                    // Answered from another thread once the polling thread has moved on.
                    return .later { respond in
                        Thread {
                            record(request.path)
                            respond { HTTPResponse(status: 202, contentType: "text/plain", text: "soon " + text) }
                        }.start()
                    }
                }
                if request.path.hasPrefix("/at-once/") {
                    // `later`, yet answered before `start` returns: still answered once, in order.
                    return .later { respond in respond { HTTPResponse(status: 200, contentType: "text/plain", text: "at once " + text) } }
                }
                return .notTaken
            }) { request in
                record(request.path)
                return HTTPResponse(status: 200, contentType: "text/plain", text: "later \(request.method) \(request.path) \(request.body.count)")
            } oversize: { _ in HTTPResponse(status: 413) }
            let client = try RawHTTPClient(port: server.port)
            // Pipelined, mixed: the answers come back in request order whichever way they were made.
            var bytes = Data()
            let paths = ["/now/1", "/later/2", "/soon/3", "/now/4", "/at-once/5", "/later/6", "/soon/7"]
            for path in paths { bytes += RawHTTPClient.requestBytes("GET", path) }
            try client.send(bytes)
            let responses = try paths.map { _ in try client.readResponse() }
            #expect(responses.map(\.text) == ["now GET /now/1 0", "later GET /later/2 0", "soon GET /soon/3 0", "now GET /now/4 0",
                                                "at once GET /at-once/5 0", "later GET /later/6 0", "soon GET /soon/7 0"])
            #expect(responses.map(\.status) == [200, 200, 202, 200, 200, 200, 202])
            // A body reaches the immediate handler whole, as it reaches the async one.
            #expect(try client.request("POST", "/now/8", body: Data("hello".utf8)).text == "now POST /now/8 5")
            #expect(try client.request("POST", "/soon/9", body: Data("hello".utf8)).text == "soon POST /soon/9 5")
            let answered = threads.withLock { $0 }
            let polling = try #require(answered["/now/1"])
            #expect(answered["/now/4"] == polling && answered["/now/8"] == polling, "all on libmicrohttpd's one polling thread")
            for path in ["/later/2", "/later/6", "/soon/3", "/soon/7"] {
                #expect(answered[path].map { pthread_equal($0, polling) == 0 } == true, "\(path) answered off the polling thread")
            }
            #expect(waitUntil(timeout: .seconds(10)) { server.activeRequests == 0 })
        }
    }

    @Test("500 connections trickling headers do not stop another client being answered within a second; idle ones time out")
    func slowClients() async throws {
        try await onThread {
            let seen = Seen()
            let server = try echoServer(seen, configuration: .init(port: 0, threads: 2, connectionLimit: 1_000, connectionTimeoutSeconds: 3))
            var slow: [RawHTTPClient] = []
            for index in 0..<500 {
                let client = try RawHTTPClient(port: server.port, timeoutSeconds: 10)
                try client.send("GET /slow/\(index) HT")  // headers never finished
                slow.append(client)
            }
            for client in slow.prefix(50) { try client.send("T") }  // a byte more, still incomplete
            let clock = ContinuousClock()
            let started = clock.now
            let answer = try RawHTTPClient(port: server.port, timeoutSeconds: 1).request("GET", "/fast")
            let elapsed = clock.now - started
            #expect(answer.status == 200)
            #expect(elapsed < .seconds(1), "answered in \(elapsed)")
            #expect(seen.requests.withLock { $0 } == ["GET /fast"])
            // The connection timeout closes the trickling connections.
            #expect(slow[499].isClosedByServer())
        }
    }

    @Test("requests are answered while every thread of Swift's global cooperative pool is blocked")
    func cooperativePoolBlocked() async throws {
        let seen = Seen()
        let server = try echoServer(seen)
        let port = server.port
        let answer = try await onThread { () throws -> String in
            let width = ProcessInfo.processInfo.activeProcessorCount
            let blockers = Blockers()
            for _ in 0..<width {
                Task.detached { [blockers] in
                    blockers.started.add(1, ordering: .relaxed)
                    blockers.release.wait()  // blocks a cooperative thread on purpose
                }
            }
            defer { for _ in 0..<width { blockers.release.signal() } }
            // Under a busy test run the pool may be taken already; either way it is blocked now or soon.
            _ = waitUntil(timeout: .seconds(30)) { blockers.started.load(ordering: .relaxed) == width }
            return try RawHTTPClient(port: port, timeoutSeconds: 10).request("GET", "/while-blocked").text
        }
        #expect(answer == "GET /while-blocked ? 0 -")
    }

    @Test("stopping with a handler still running closes its connection instead of crashing")
    func stopWithSuspended() async throws {
        try await onThread {
            let gate = ThreadGate()
            let server = try HTTPServer(configuration: .init(port: 0, threads: 1)) { _ in
                await gate.wait()
                return HTTPResponse(status: 200)
            } oversize: { _ in HTTPResponse(status: 413) }
            let port = server.port
            let inFlight = inBackground { try RawHTTPClient(port: port).request("GET", "/x") }
            #expect(waitUntil(timeout: .seconds(10)) { server.activeRequests == 1 })
            #expect(!server.stop(drainTimeout: .milliseconds(50)))
            #expect(throws: RawHTTPError.self) { try inFlight() }
            gate.open()
        }
    }

    @Test("stop answers the request in progress, then refuses connections")
    func stopDrains() async throws {
        try await onThread {
            let gate = ThreadGate()
            let server = try HTTPServer(configuration: .init(port: 0, threads: 1)) { _ in
                await gate.wait()
                return HTTPResponse(status: 200, contentType: "text/plain", text: "done")
            } oversize: { _ in HTTPResponse(status: 413) }
            let port = server.port
            let inFlight = inBackground { try RawHTTPClient(port: port).request("GET", "/x") }
            #expect(waitUntil(timeout: .seconds(10)) { server.activeRequests == 1 })
            let stopping = inBackground { server.stop(drainTimeout: .seconds(10)) }
            server.stopAccepting()
            #expect(throws: RawHTTPError.self) { try RawHTTPClient(port: port) }
            gate.open()
            let response = try inFlight()
            #expect(response.status == 200 && response.text == "done")
            #expect(response.headers["connection"]?.lowercased() == "close")
            #expect(try stopping())
        }
    }

    @Test("listen addresses parse as IPv4:port only", arguments: [
        ("127.0.0.1:8080", true), ("0.0.0.0:0", true), ("localhost:80", false), ("127.0.0.1", false), ("1.2.3:9", false),
    ])
    func parseListen(text: String, valid: Bool) {
        #expect((HTTPServerConfiguration.parseListen(text) != nil) == valid)
    }
}

/// An async gate opened from any thread: `wait` suspends until `open`, with no actor or global
/// executor involved (the test opens it from a plain thread while the pool may be busy).
final class ThreadGate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// Runs `body` on a thread of its own; the returned function waits for its result.
func inBackground<T: Sendable>(_ body: @escaping @Sendable () throws -> T) -> () throws -> T {
    let box = ResultBox<T>()
    Thread { box.set(Result { try body() }) }.start()
    return { try box.wait() }
}

final class ResultBox<T: Sendable>: Sendable {
    private let result = Mutex<Result<T, any Error>?>(nil)
    private let done = DispatchSemaphore(value: 0)
    func set(_ value: Result<T, any Error>) { result.withLock { $0 = value }; done.signal() }
    func wait() throws -> T { done.wait(); return try result.withLock { $0! }.get() }
}

/// Tasks that hold cooperative threads until released.
final class Blockers: Sendable {
    let started = Atomic<Int>(0)
    let release = DispatchSemaphore(value: 0)
}
