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
///
/// `--acks FILE` (bench step 8b) writes one JSON line per line answered 200, after the run:
/// `{"line", "notificationUUID" (from the signed payload), "dueAt", "ackedAt"}`, the two moments
/// in epoch milliseconds of the realtime clock (what a receiver on this machine stamps with), so
/// that what the server did with a notification after its 200 can be timed from that 200.
/// `post_last_ack_epoch_ms` (always reported) is the realtime moment of the last 200.
enum WebhookPostBench {
    static func run(_ arguments: [String]) throws {
        let options = try Options(arguments, valued: ["--input", "--port", "--connections", "--limit", "--rate", "--duration", "--path", "--acks"])
        let port = UInt16(try options.int("--port", default: 8080))
        let connections = max(1, try options.int("--connections", default: 16))
        let limit = try options.int("--limit", default: 0)
        let rate = try options.double("--rate", default: 0)
        let duration = try options.double("--duration", default: 0)
        let path = options.string("--path", default: "/notifications")
        let acksPath = options.optional("--acks")
        guard (rate > 0) == (duration > 0) else { throw BenchError("--rate and --duration go together (open loop), or neither (closed loop)") }
        let file = try LineFile(path: try options.string("--input"))
        var read: [Data] = []
        var bodies: [Data] = []
        let wanted = rate > 0 ? Int((rate * duration).rounded()) : limit
        while wanted <= 0 || read.count < wanted, let body = file.next() {
            if acksPath != nil { bodies.append(body) }
            read.append(Data("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
        }
        let requests = read
        read = []
        guard !requests.isEmpty else { throw BenchError("no lines to post") }
        let next = Atomic<Int>(0)
        let maxLag = Mutex<Double>(0)
        let samples = LoadLatencies()
        let acks = Mutex<[(line: Int, due: Double, acked: Double)]>([])
        let lastAck = Mutex<Double>(0)
        let recordAcks = acksPath != nil
        let started = now() + (rate > 0 ? 0.05 : 0)     // open loop: the threads start before the first line is due
        // Monotonic `due` moments as realtime epoch ms (for --acks).
        let realtimeOffset = realtimeMillis() - now() * 1000
        let done = DispatchGroup()
        for _ in 0..<connections {
            done.enter()
            Thread {
                let connection = HTTPClientConnection(port: port)
                var latencies: [Double] = []
                var errors = 0, lag = 0.0
                var statuses: [Int: Int] = [:]
                var acked: [(line: Int, due: Double, acked: Double)] = []
                var latestAck = 0.0
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
                    if answer.status == 200 {
                        latencies.append(now() - due)
                        let at = realtimeMillis()
                        latestAck = max(latestAck, at)
                        if recordAcks { acked.append((index, due, at)) }
                    } else {
                        errors += 1; statuses[answer.status, default: 0] += 1
                    }
                    if answer.status == 0 { break }    // the connection is gone: this thread stops
                }
                samples.add(latencies: latencies, errors: errors, connects: connection.connects, statuses: statuses)
                maxLag.withLock { $0 = max($0, lag) }
                lastAck.withLock { $0 = max($0, latestAck) }
                if recordAcks { acks.withLock { $0 += acked } }
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
        result["post_last_ack_epoch_ms"] = round(lastAck.withLock { $0 }, 1)
        if let acksPath {
            var text = ""
            for ack in acks.withLock({ $0 }).sorted(by: { $0.line < $1.line }) {
                let line: [String: Any] = ["line": ack.line + 1, "notificationUUID": notificationUUID(bodies[ack.line]) ?? NSNull(),
                                           "dueAt": round(ack.due * 1000 + realtimeOffset, 2), "ackedAt": round(ack.acked, 2)]
                text += String(decoding: try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]), as: UTF8.self) + "\n"
            }
            try Data(text.utf8).write(to: URL(fileURLWithPath: acksPath))
        }
        if rate > 0 {
            result["post_offered_per_second"] = rate
            result["post_duration_seconds"] = duration
            result["post_max_send_lag_ms"] = round(maxLag.withLock { $0 } * 1000, 2)
        }
        try emit(result)
    }
}

/// The realtime clock (`CLOCK_REALTIME`) in epoch milliseconds, fractional.
func realtimeMillis() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Double(ts.tv_sec) * 1000 + Double(ts.tv_nsec) / 1e6
}

/// The `notificationUUID` of a notification body `{"signedPayload": "<JWS>"}`: from the JWS
/// payload, not verified (the server verified it); `nil` when the body is not one.
func notificationUUID(_ body: Data) -> String? {
    guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
          let jws = object["signedPayload"] as? String else { return nil }
    let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 3 else { return nil }
    var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while base64.count % 4 != 0 { base64 += "=" }
    guard let payload = Data(base64Encoded: base64),
          let claims = try? JSONSerialization.jsonObject(with: payload) as? [String: Any] else { return nil }
    return claims["notificationUUID"] as? String
}
