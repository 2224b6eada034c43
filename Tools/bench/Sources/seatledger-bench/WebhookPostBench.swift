import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `post`: posts every line of a stream to `POST /notifications` of a running `seatledger serve`
/// over C keep-alive connections (a thread each, one request in flight per connection, like
/// Apple's retrying sender), and reports notifications/s and acknowledgement latency.
///
/// A load generator, not a server: it writes `POST` requests and reads `Content-Length` framed
/// answers, which is all `serve` sends. Any answer but 200 counts as an error.
enum WebhookPostBench {
    /// Shared by the connection threads: the next line to send, latencies and errors.
    final class Shared: Sendable {
        let next = Atomic<Int>(0)
        let errors = Atomic<Int>(0)
        let latencies = Mutex<[Double]>([])
    }

    static func run(_ arguments: [String]) throws {
        let options = try Options(arguments, valued: ["--input", "--port", "--connections"])
        let port = UInt16(try options.int("--port", default: 8080))
        let connections = max(1, try options.int("--connections", default: 16))
        let file = try LineFile(path: try options.string("--input"))
        var lines: [Data] = []
        while let line = file.next() { lines.append(line) }
        let requests = lines.map { body in
            Data("POST /notifications HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body
        }
        let shared = Shared()
        let started = now()
        let done = DispatchGroup()
        for _ in 0..<connections {
            done.enter()
            Thread {
                connection(port: port, requests: requests, shared: shared)
                done.leave()
            }.start()
        }
        done.wait()
        let seconds = now() - started
        let latencies = shared.latencies.withLock { $0 }.sorted()
        try emit([
            "post_notifications": lines.count, "post_connections": connections, "post_seconds": round(seconds, 3),
            "post_per_second": round(Double(latencies.count) / seconds, 1), "post_acknowledged": latencies.count,
            "post_errors": shared.errors.load(ordering: .relaxed),
            "post_p50_ms": round(percentile(latencies, 0.50) * 1000, 2), "post_p99_ms": round(percentile(latencies, 0.99) * 1000, 2),
        ])
    }

    private static func connection(port: UInt16, requests: [Data], shared: Shared) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { shared.errors.add(1, ordering: .relaxed); return }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var noDelay: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { shared.errors.add(1, ordering: .relaxed); return }
        var buffer = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 16_384)
        var mine: [Double] = []
        defer { shared.latencies.withLock { $0 += mine } }
        while true {
            let index = shared.next.add(1, ordering: .relaxed).oldValue
            guard index < requests.count else { return }
            let sent = now()
            let ok = requests[index].withUnsafeBytes { raw -> Bool in
                var offset = 0
                while offset < raw.count {
                    let count = send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                    if count <= 0 { return false }
                    offset += count
                }
                return true
            }
            guard ok else { shared.errors.add(1, ordering: .relaxed); return }
            // Read one response: headers to the blank line, then Content-Length bytes.
            var status = 0
            while true {
                if let end = headerEnd(buffer) {
                    let head = String(decoding: buffer[0..<end], as: UTF8.self)
                    status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
                    let length = head.lowercased().components(separatedBy: "\r\n")
                        .first { $0.hasPrefix("content-length:") }.flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } ?? 0
                    if buffer.count >= end + 4 + length {
                        buffer.removeFirst(end + 4 + length)
                        break
                    }
                }
                let count = recv(fd, &chunk, chunk.count, 0)
                guard count > 0 else { shared.errors.add(1, ordering: .relaxed); return }
                buffer.append(contentsOf: chunk[0..<count])
            }
            if status == 200 { mine.append(now() - sent) } else { shared.errors.add(1, ordering: .relaxed) }
        }
    }

    private static func headerEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }
}
