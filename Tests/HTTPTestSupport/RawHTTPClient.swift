import Foundation
import Glibc
import Synchronization

/// A response as a raw client read it off the socket.
public struct RawHTTPResponse: Sendable {
    /// The status code.
    public let status: Int
    /// Headers, names lowercased.
    public let headers: [String: String]
    /// The body.
    public let body: Data
    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// Why a raw client call failed.
public struct RawHTTPError: Error, CustomStringConvertible {
    /// What happened.
    public let description: String
    init(_ description: String) { self.description = description }
}

/// A minimal HTTP/1.1 client on one TCP socket, for tests that must control the bytes on the
/// wire: trickled headers, pipelined requests, `Expect: 100-continue`. Not a parser for the
/// world: it reads `Content-Length` framed responses, which is all libmicrohttpd sends here.
public final class RawHTTPClient {
    /// The socket.
    public let socket: Int32
    private var buffer = [UInt8]()

    /// Connects to `127.0.0.1:port`; reads time out after `timeoutSeconds`.
    public init(port: UInt16, timeoutSeconds: Int = 10) throws {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawHTTPError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw RawHTTPError("connect to 127.0.0.1:\(port): \(reason)")
        }
        socket = fd
    }

    deinit { close(socket) }

    /// Sends `bytes` (all of them).
    public func send(_ bytes: Data) throws {
        var offset = 0
        try bytes.withUnsafeBytes { raw in
            while offset < raw.count {
                let sent = Glibc.send(socket, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                guard sent > 0 else { throw RawHTTPError("send: \(String(cString: strerror(errno)))") }
                offset += sent
            }
        }
    }

    /// Sends text.
    public func send(_ text: String) throws { try send(Data(text.utf8)) }

    /// Whether the server closed the connection (a read returns end of file); waits up to the read timeout.
    public func isClosedByServer() -> Bool {
        var byte: UInt8 = 0
        let count = recv(socket, &byte, 1, 0)
        if count > 0 { buffer.append(byte) }
        return count == 0 || (count < 0 && errno == ECONNRESET)
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = recv(socket, &chunk, chunk.count, 0)
        if count == 0 { throw RawHTTPError("connection closed by the server") }
        if count < 0 { throw RawHTTPError("recv: \(String(cString: strerror(errno)))") }
        buffer.append(contentsOf: chunk[0..<count])
    }

    /// Reads the next response (an interim `100 Continue` is a response too).
    public func readResponse() throws -> RawHTTPResponse {
        let separator: [UInt8] = [13, 10, 13, 10]
        var headerEnd: Int?
        while headerEnd == nil {
            if buffer.count >= 4 {
                for index in 0...(buffer.count - 4) where buffer[index..<(index + 4)].elementsEqual(separator) {
                    headerEnd = index
                    break
                }
            }
            if headerEnd == nil { try fill() }
        }
        let head = String(decoding: buffer[0..<headerEnd!], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw RawHTTPError("bad status line in \(head)") }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        let bodyStart = headerEnd! + 4
        while buffer.count < bodyStart + length { try fill() }
        let body = Data(buffer[bodyStart..<(bodyStart + length)])
        buffer.removeFirst(bodyStart + length)
        return RawHTTPResponse(status: status, headers: headers, body: body)
    }

    /// The bytes of one request.
    public static func requestBytes(_ method: String, _ path: String, headers: [(String, String)] = [], body: Data = Data()) -> Data {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { text += "Content-Length: \(body.count)\r\n" }
        text += "\r\n"
        return Data(text.utf8) + body
    }

    /// Sends one request and reads its response.
    public func request(_ method: String, _ path: String, headers: [(String, String)] = [], body: Data = Data()) throws -> RawHTTPResponse {
        try send(Self.requestBytes(method, path, headers: headers, body: body))
        return try readResponse()
    }
}

/// Polls `condition` until it holds or `timeout` passes; whether it held.
public func waitUntil(timeout: Duration, _ condition: () throws -> Bool) rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if try condition() { return true }
        usleep(10_000)
    }
    return try condition()
}

/// Runs blocking `body` (socket calls) on a thread of its own, so an async test never blocks
/// one of Swift's few cooperative threads, which the server's handlers need.
public func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// Polls `condition` until it holds or `timeout` passes, without blocking a cooperative thread.
public func waitUntil(timeout: Duration, _ condition: @Sendable () throws -> Bool) async rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if try condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return try condition()
}

/// Blocking work started on a thread of its own at once, awaited later.
///
/// `async let x = onThread { … }` starts the thread only when the cooperative pool runs the child
/// task, and in a full suite run on two cores both pool threads can be held by other tests for
/// many seconds: a long-poll meant to be waiting by the next line was then not even sent
/// (`ReadAPITests.changeFeed`). `StartedThread` sends it now.
public final class StartedThread<T: Sendable>: Sendable {
    private let outcome = Mutex<Result<T, any Error>?>(nil)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts `body` on a new thread.
    public init(_ body: @escaping @Sendable () throws -> T) {
        Thread { [self] in
            let result = Result { try body() }
            outcome.withLock { $0 = result }
            finished.signal()
        }.start()
    }

    /// The body's result (or its error), once it has returned; waits on a thread of its own.
    public func value() async throws -> T {
        try await onThread { [self] in
            finished.wait()
            finished.signal()  // a second call returns at once
            return try outcome.withLock { $0! }.get()
        }
    }
}
