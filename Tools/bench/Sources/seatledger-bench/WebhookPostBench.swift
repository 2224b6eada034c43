import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `post`: posts the lines of a stream to `POST /notifications` of a running server (`seatledger
/// serve`, or the Python peer receiver) over C connections, a thread each, one request in flight
/// per connection (like Apple's retrying sender), and reports notifications/s and latency.
///
/// Two modes:
/// - **closed loop** (default): each connection sends its next line as soon as the previous one
///   was answered; `post_per_second` is the server's throughput at that concurrency.
/// - **open loop** (`--rate R --duration S`): line `i` is *due* at `start + i / R`, whatever the
///   answers; a connection that is free sends the next due line at its time, and its latency is
///   measured from when it was due, not from when it could be sent, so a server that stalls is
///   charged for the requests queued behind the stall (no coordinated omission). C connections
///   bound what can be in flight; `post_max_send_lag_ms` says how late the latest send was.
///
/// A load generator, not a server: it writes `POST` requests and reads `Content-Length` framed
/// answers (``HTTPClientConnection``). Any answer but 200 counts as an error.
enum WebhookPostBench {
    static func run(_ arguments: [String]) throws {
        let options = try Options(arguments, valued: ["--input", "--port", "--connections", "--limit", "--rate", "--duration", "--path"])
        let port = UInt16(try options.int("--port", default: 8080))
        let connections = max(1, try options.int("--connections", default: 16))
        let limit = try options.int("--limit", default: 0)
        let rate = try options.double("--rate", default: 0)
        let duration = try options.double("--duration", default: 0)
        let path = options.string("--path", default: "/notifications")
        guard (rate > 0) == (duration > 0) else { throw BenchError("--rate and --duration go together (open loop), or neither (closed loop)") }
        let file = try LineFile(path: try options.string("--input"))
        var read: [Data] = []
        let wanted = rate > 0 ? Int((rate * duration).rounded()) : limit
        while wanted <= 0 || read.count < wanted, let body = file.next() {
            read.append(Data("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
        }
        let requests = read
        read = []
        guard !requests.isEmpty else { throw BenchError("no lines to post") }
        let next = Atomic<Int>(0)
        let maxLag = Mutex<Double>(0)
        let samples = LoadLatencies()
        let started = now() + (rate > 0 ? 0.05 : 0)     // open loop: the threads start before the first line is due
        let done = DispatchGroup()
        for _ in 0..<connections {
            done.enter()
            Thread {
                let connection = HTTPClientConnection(port: port)
                var latencies: [Double] = []
                var errors = 0, lag = 0.0
                var statuses: [Int: Int] = [:]
                while true {
                    let index = next.add(1, ordering: .relaxed).oldValue
                    guard index < requests.count else { break }
                    var due = now()
                    if rate > 0 {
                        due = started + Double(index) / rate
                        if now() < due { sleep(until: due) }
                        lag = max(lag, now() - due)
                    }
                    let answer = connection.exchange(requests[index])
                    if answer.status == 200 { latencies.append(now() - due) } else { errors += 1; statuses[answer.status, default: 0] += 1 }
                    if answer.status == 0 { break }    // the connection is gone: this thread stops
                }
                samples.add(latencies: latencies, errors: errors, connects: connection.connects, statuses: statuses)
                maxLag.withLock { $0 = max($0, lag) }
                done.leave()
            }.start()
        }
        done.wait()
        let seconds = now() - started
        var result = samples.keys(prefix: "post_")
        result["post_notifications"] = requests.count
        result["post_connections"] = connections
        result["post_seconds"] = round(seconds, 3)
        result["post_per_second"] = round(Double(samples.succeeded) / seconds, 1)
        result["post_mode"] = rate > 0 ? "open loop" : "closed loop"
        if rate > 0 {
            result["post_offered_per_second"] = rate
            result["post_duration_seconds"] = duration
            result["post_max_send_lag_ms"] = round(maxLag.withLock { $0 } * 1000, 2)
        }
        try emit(result)
    }
}
