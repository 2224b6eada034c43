import Foundation
import GroupSimulator
import SeatLedger
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `get`: `GET /v1/members/{id}` (or, with `--route entitlements`, `GET /v1/entitlements/{id}`)
/// against a running `seatledger serve` over C keep-alive
/// connections (a thread each, one request in flight per connection, closed loop) for a fixed
/// time, after an untimed warm-up; reports requests/s and latency, and with `--pid` the server's
/// CPU time per request in the timed part (`/proc/PID/stat`).
///
/// The member ids are sampled from the ledger before the load starts (`--db`, read-only):
/// `--count` groups drawn with `--seed`, and of each one identifier a member can be asked by
/// (index roles `member`, `memberRef`, `purchaser`, `alias`), also drawn with the seed. Requests
/// go through the ids in a seeded shuffled order. Any answer but 200 counts as an error.
enum MemberGetBench {
    /// The index roles that name a person (what an app server asks `/v1/members/{id}` with).
    static let memberRoles: Set<String> = ["member", "memberRef", "purchaser", "alias"]

    static func run(_ arguments: [String]) throws {
        let options = try Options(arguments, valued: ["--db", "--port", "--token", "--connections", "--count", "--seed", "--duration", "--warmup", "--pid", "--route"])
        let route = options.string("--route", default: "members")
        guard ["members", "entitlements"].contains(route) else { throw BenchError("--route must be members or entitlements, got \(route)") }
        let port = UInt16(try options.int("--port", default: 8080))
        let token = try options.string("--token")
        let connections = max(1, try options.int("--connections", default: 16))
        let duration = try options.double("--duration", default: 10)
        let warmup = try options.double("--warmup", default: 2)
        let serverPid = try options.int("--pid", default: 0)
        let ids = try sampleIds(db: try options.string("--db"), count: try options.int("--count", default: 10_000),
                                seed: UInt64(try options.int("--seed", default: 1)))
        let requests = ids.map { sample in
            Data("GET /v1/\(route)/\(percentEncoded(sample.id)) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\r\n".utf8)
        }
        var roles: [String: Int] = [:]
        for id in ids { roles[id.role, default: 0] += 1 }

        let next = Atomic<Int>(0)
        let bodyBytes = Atomic<Int>(0)
        let samples = LoadLatencies()
        let warmupEnds = now() + warmup
        let ends = warmupEnds + duration
        let done = DispatchGroup()
        for _ in 0..<connections {
            done.enter()
            Thread {
                let connection = HTTPClientConnection(port: port)
                var latencies: [Double] = []
                var errors = 0, bytes = 0
                var statuses: [Int: Int] = [:]
                while true {
                    let sent = now()
                    guard sent < ends else { break }
                    let index = next.add(1, ordering: .relaxed).oldValue % requests.count
                    let answer = connection.exchange(requests[index])
                    guard sent >= warmupEnds else {
                        if answer.status == 0 { break }
                        continue
                    }
                    if answer.status == 200 {
                        latencies.append(now() - sent)
                        bytes += answer.bodyBytes
                    } else {
                        errors += 1
                        statuses[answer.status, default: 0] += 1
                    }
                    if answer.status == 0 { break }
                }
                bodyBytes.add(bytes, ordering: .relaxed)
                samples.add(latencies: latencies, errors: errors, connects: connection.connects, statuses: statuses)
                done.leave()
            }.start()
        }
        sleep(until: warmupEnds)
        let ticksAtStart = serverPid > 0 ? Self.cpuTicks(pid: serverPid) : nil
        done.wait()
        let ticksAtEnd = serverPid > 0 ? Self.cpuTicks(pid: serverPid) : nil
        var result = samples.keys(prefix: "get_")
        if let ticksAtStart, let ticksAtEnd, samples.succeeded > 0 {
            let seconds = Double(ticksAtEnd - ticksAtStart) / Double(sysconf(Int32(_SC_CLK_TCK)))
            result["get_server_cpu_us_per_request"] = round(seconds * 1e6 / Double(samples.succeeded), 0)
            result["get_server_busy_cores"] = round(seconds / duration, 2)
        }
        result["get_connections"] = connections
        result["get_seconds"] = duration
        result["get_warmup_seconds"] = warmup
        result["get_ids"] = ids.count
        result["get_id_roles"] = roles
        result["get_per_second"] = round(Double(samples.succeeded) / duration, 1)
        result["get_avg_body_bytes"] = samples.succeeded > 0 ? bodyBytes.load(ordering: .relaxed) / samples.succeeded : 0
        try emit(result)
    }

    /// User + system CPU ticks process `pid` used so far (`/proc/PID/stat` fields 14 and 15).
    static func cpuTicks(pid: Int) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }

    /// `count` member identifiers of the ledger at `db`: a seeded draw of groups, and of one
    /// member identifier in each; in a seeded order.
    static func sampleIds(db: String, count: Int, seed: UInt64) throws -> [(id: String, role: String)] {
        let ledger = try Ledger.open(path: db, readOnly: true)
        let keys = try ledger.store.allGroupKeys()
        guard !keys.isEmpty else { throw BenchError("\(db) has no groups (rebuild first)") }
        var random = SeededRandom(seed: seed)
        var ids: [(id: String, role: String)] = []
        var attempts = 0
        while ids.count < count, attempts < count * 4 {
            attempts += 1
            let key = keys[Int(random.next() % UInt64(keys.count))]
            let rows = try ledger.store.groupIndexRows(groupKeys: [key]).filter { memberRoles.contains($0.role) }
                .sorted { ($0.role, $0.identifier) < ($1.role, $1.identifier) }
            guard !rows.isEmpty else { continue }
            let row = rows[Int(random.next() % UInt64(rows.count))]
            ids.append((row.identifier, row.role))
        }
        guard !ids.isEmpty else { throw BenchError("\(db): no member identifiers in the group index") }
        return ids
    }

    /// `id` with every byte outside RFC 3986's unreserved set percent-encoded (a path segment).
    static func percentEncoded(_ id: String) -> String {
        var out = ""
        for byte in id.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }
}
