import Foundation

/// `redis://[[user]:password@]host:port/stream-key`, the address of a Redis stream.
public struct RedisStreamURL: Sendable, Equatable, CustomStringConvertible {
    /// The server's host name or address.
    public let host: String
    /// The server's port (6379 by default).
    public let port: Int
    /// The stream key.
    public let key: String
    /// The ACL user to `AUTH` as (`nil`: the default user).
    public let username: String?
    /// The password to `AUTH` with (`nil`: no `AUTH`). Never part of ``description``.
    public let password: String?

    /// Parses `redis://[[user]:password@]host[:port]/key` (user and password percent-decoded).
    ///
    /// The scheme is case-insensitive (`REDIS://` is `redis://`).
    public init(_ text: String) throws(RedisError) {
        guard text.prefix("redis://".count).lowercased() == "redis://" else {
            throw RedisError(isConnectionError: false, message: "not a redis:// URL: \(Self.redacted(text))", command: nil)
        }
        let whole = text.dropFirst("redis://".count)
        let information = Self.userInformation(in: whole)
        let rest = information.map { whole[whole.index(after: $0.endIndex)...] } ?? whole
        guard let slash = rest.firstIndex(of: "/"), rest.index(after: slash) < rest.endIndex else {
            throw RedisError(isConnectionError: false, message: "missing stream key in \(Self.redacted(text)) (expected redis://host:port/key)", command: nil)
        }
        let authority = rest[..<slash]
        key = String(rest[rest.index(after: slash)...])
        if let information {
            let parts = information.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let user = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let secret = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : nil
            // `redis://:password@` and `redis://password@` (no colon) both mean the default user's password.
            username = secret == nil || user.isEmpty ? nil : user
            password = secret ?? (user.isEmpty ? nil : user)
        } else {
            username = nil
            password = nil
        }
        // A bracketed IPv6 address ("[::1]:6380") keeps its colons; the port follows "]:".
        var hostPart = authority
        var portPart: Substring?
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else {
                    throw RedisError(isConnectionError: false, message: "bad port in \(Self.redacted(text))", command: nil)
                }
                portPart = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portPart = authority[authority.index(after: colon)...]
        }
        host = String(hostPart)
        if let portPart {
            guard let port = Int(portPart), (1...65535).contains(port) else {
                throw RedisError(isConnectionError: false, message: "bad port in \(Self.redacted(text))", command: nil)
            }
            self.port = port
        } else {
            port = 6379
        }
        guard !host.isEmpty else { throw RedisError(isConnectionError: false, message: "missing host in \(Self.redacted(text))", command: nil) }
    }

    /// This address with another password (and ACL user), e.g. one read from a file or the
    /// environment instead of the command line, where `ps` shows it.
    public func withPassword(_ password: String, username: String? = nil) -> RedisStreamURL {
        RedisStreamURL(host: host, port: port, key: key, username: username ?? self.username, password: password)
    }

    private init(host: String, port: Int, key: String, username: String?, password: String?) {
        self.host = host
        self.port = port
        self.key = key
        self.username = username
        self.password = password
    }

    /// `text` for an error message: anything between `://` and the last `@` (user information,
    /// a password with an unencoded `/` or `@` included) written `***`.
    public static func redacted(_ text: String) -> String {
        guard let scheme = text.range(of: "://") else { return text }
        let rest = text[scheme.upperBound...]
        // A URL too broken to have a host and key still hides everything before its last '@'.
        guard let end = userInformation(in: rest)?.endIndex ?? rest.lastIndex(of: "@") else { return text }
        return String(text[..<scheme.upperBound]) + "***" + String(text[end...])
    }

    /// The user information of `rest` (a URL after `scheme://`): up to the last `@` that a
    /// `host[:port]/key` follows, so a password may hold an unencoded `@` or `/`
    /// (`redis://:a@b/c@host:6379/key` is password `a@b/c`), while a key may hold an `@` (`redis://host/s@1`);
    /// `nil` without one. The parser and every message that hides the password use this one rule.
    package static func userInformation(in rest: Substring) -> Substring? {
        var at = rest.endIndex
        while let found = rest[..<at].lastIndex(of: "@") {
            if rest[rest.index(after: found)...].contains("/") { return rest[..<found] }
            at = found
        }
        return nil
    }

    /// The URL for messages: `redis://***@host:port/key` when it carries credentials.
    public var description: String {
        "redis://\(password == nil ? "" : "***@")\(host.contains(":") ? "[\(host)]" : host):\(port)/\(key)"
    }
}

/// One stream entry.
public struct StreamEntry: Sendable, Equatable {
    /// The stream id, e.g. `1700000000000-0`.
    public let id: String
    /// Field → value.
    public let fields: [String: Data]
    /// Field → a value longer than the client's ``RedisStreamClient/valueLimit``, not read (only
    /// with a limit; such a field is not in ``fields``).
    public var oversized: [String: OversizeValue] = [:]

    /// An entry.
    public init(id: String, fields: [String: Data], oversized: [String: OversizeValue] = [:]) {
        self.id = id
        self.fields = fields
        self.oversized = oversized
    }
}

/// A stream value longer than the reading client's limit: its length and first bytes, and the key
/// under which the server keeps a copy for a while (``RedisStreamClient/stagedRange(_:from:count:)``
/// reads it in pieces, e.g. to hash it in bounded memory).
public struct OversizeValue: Sendable, Equatable {
    /// The whole value's length in bytes.
    public let length: Int
    /// Its first bytes (at most the client's ``RedisStreamClient/keptBytes``).
    public let prefix: Data
    /// A string key holding a copy of the value (expires after an hour).
    public let stagedKey: String
}

/// Consumer-group operations on one stream over one connection.
public final class RedisStreamClient {
    /// The stream.
    public let url: RedisStreamURL
    private let connection: RedisConnection

    /// Connects to the stream's server. `longestBlockMilliseconds` is the longest `BLOCK` a read
    /// will ask for: commands may take that long plus a margin before they time out.
    public init(url: RedisStreamURL, timeoutMilliseconds: Int = 2000, longestBlockMilliseconds: Int = 0) throws(RedisError) {
        self.url = url
        connection = try RedisConnection(host: url.host, port: url.port, timeoutMilliseconds: timeoutMilliseconds,
                                         commandTimeoutMilliseconds: max(10_000, longestBlockMilliseconds + 5_000))
        if let password = url.password {
            // The error is the server's ("WRONGPASS …"), which never repeats the password.
            do {
                if let user = url.username {
                    try connection.command("AUTH", user, password)
                } else {
                    try connection.command("AUTH", password)
                }
            } catch where !error.isConnectionError && !error.isTransient {
                throw RedisError(isConnectionError: false, message: "AUTH at \(url) refused: \(error.message)", command: "AUTH")
            }
        }
    }

    /// Creates the consumer group at the start of the stream (creating the stream too) unless it exists.
    public func ensureGroup(_ group: String) throws(RedisError) {
        do {
            try connection.command("XGROUP", "CREATE", url.key, group, "0", "MKSTREAM")
        } catch where error.message.hasPrefix("BUSYGROUP") {
            return
        }
    }

    /// `XREADGROUP`: `">"` for new entries, `"0"` for this consumer's own pending entries.
    ///
    /// With a ``valueLimit`` the read runs as a script (``boundedReadScript``), which cannot block:
    /// a wait for new entries polls every ``pollMilliseconds`` until `blockMilliseconds` have passed.
    ///
    /// With a ``valueLimit`` the wait is a poll every ``pollMilliseconds``, which also ends early
    /// (with nothing) once `shouldStop` says so: a stopping consumer does not sit out the rest of
    /// `blockMilliseconds`. A plain `XREADGROUP … BLOCK` cannot be interrupted that way.
    public func read(group: String, consumer: String, count: Int, blockMilliseconds: Int?, from id: String = ">",
                     shouldStop: () -> Bool = { false }) throws(RedisError) -> [StreamEntry] {
        if let valueLimit {
            let deadline = Date().addingTimeInterval(Double(id == ">" ? blockMilliseconds ?? 0 : 0) / 1000)
            while true {
                let reply = try boundedRead(["group", group, consumer, String(count), id, "", String(valueLimit)])
                let entries = Self.entries(reply.elements.dropFirst().first?.elements ?? [])
                if !entries.isEmpty || Date() >= deadline || shouldStop() { return entries }
                usleep(UInt32(pollMilliseconds) * 1000)
            }
        }
        var arguments = ["XREADGROUP", "GROUP", group, consumer, "COUNT", String(count)]
        if let blockMilliseconds, id == ">" { arguments += ["BLOCK", String(blockMilliseconds)] }
        arguments += ["STREAMS", url.key, id]
        let reply = try connection.command(arguments.map { Data($0.utf8) })
        // [[key, [[id, [field, value, …]], …]]] or nil on timeout.
        guard let stream = reply.elements.first else { return [] }
        return Self.entries(stream.elements.dropFirst().first?.elements ?? [])
    }

    /// `XAUTOCLAIM`: takes over entries idle longer than `minIdleMilliseconds` (e.g. from a dead consumer).
    public func autoclaim(group: String, consumer: String, minIdleMilliseconds: Int, start: String = "0-0", count: Int) throws(RedisError) -> (next: String, entries: [StreamEntry]) {
        let reply: RedisValue
        if let valueLimit {
            reply = try boundedRead(["claim", group, consumer, String(count), start, String(minIdleMilliseconds), String(valueLimit)])
        } else {
            reply = try connection.command("XAUTOCLAIM", url.key, group, consumer, String(minIdleMilliseconds), start, "COUNT", String(count))
        }
        let parts = reply.elements
        return (parts.first?.text ?? "0-0", Self.entries(parts.dropFirst().first?.elements ?? []))
    }

    /// `XACK`; returns how many were acknowledged.
    @discardableResult
    public func ack(group: String, ids: [String]) throws(RedisError) -> Int64 {
        guard !ids.isEmpty else { return 0 }
        return try connection.command((["XACK", url.key, group] + ids).map { Data($0.utf8) }).integer ?? 0
    }

    /// Entries delivered to the group but not yet acknowledged.
    public func pendingCount(group: String) throws(RedisError) -> Int64 {
        try connection.command("XPENDING", url.key, group).elements.first?.integer ?? 0
    }

    /// Entries in the stream not yet delivered to the group (Redis 7 `lag`), if known.
    public func lag(group: String) throws(RedisError) -> Int64? {
        for info in try connection.command("XINFO", "GROUPS", url.key).elements {
            let pairs = info.elements
            var fields: [String: RedisValue] = [:]
            var index = 0
            while index + 1 < pairs.count {
                if let name = pairs[index].text { fields[name] = pairs[index + 1] }
                index += 2
            }
            if fields["name"]?.text == group { return fields["lag"]?.integer }
        }
        return nil
    }

    /// `XADD key * field value`; returns the new id.
    @discardableResult
    public func add(field: String, value: Data) throws(RedisError) -> String {
        try connection.command([Data("XADD".utf8), Data(url.key.utf8), Data("*".utf8), Data(field.utf8), value]).text ?? ""
    }

    /// `XLEN`.
    public func length() throws(RedisError) -> Int64 {
        try connection.command("XLEN", url.key).integer ?? 0
    }

    static func entries(_ items: [RedisValue]) -> [StreamEntry] {
        items.compactMap { item in
            let parts = item.elements
            guard let id = parts.first?.text else { return nil }
            var fields: [String: Data] = [:]
            var oversized: [String: OversizeValue] = [:]
            let values = parts.dropFirst().first?.elements ?? []
            var index = 0
            while index + 1 < values.count {
                guard let name = values[index].text else { index += 2; continue }
                switch values[index + 1] {
                case .string(let data):
                    fields[name] = data
                case .array(let marker):
                    // The bounded read's stand-in: [length, first bytes, staged key].
                    if marker.count == 3, let length = marker[0].integer, case .string(let prefix) = marker[1], let key = marker[2].text {
                        oversized[name] = OversizeValue(length: Int(length), prefix: prefix, stagedKey: key)
                    }
                default:
                    break
                }
                index += 2
            }
            return StreamEntry(id: id, fields: fields, oversized: oversized)
        }
    }

    // MARK: Reading in bounded memory

    /// Values longer than this are not read: a read returns their length, first ``keptBytes``
    /// bytes and a staged copy instead (``StreamEntry/oversized``). `nil`: every value is read
    /// whole (hiredis 0.14 has no limit of its own on a reply's size).
    public var valueLimit: Int?
    /// How much of an oversize value a read returns.
    public var keptBytes = 64 << 10
    /// How often a bounded read that found nothing asks again while it waits.
    public var pollMilliseconds = 20

    /// `XREADGROUP` (mode `group`) or `XAUTOCLAIM` (mode `claim`) on the server, with every value
    /// longer than the limit copied to a staged key of this group and consumer (one hour) and replaced by
    /// `[length, first bytes, key]`. Scripts cannot block, hence the polling in ``read``.
    /// ARGV: mode, group, consumer, count, id (or claim start), minimum idle ms, limit, kept bytes,
    /// staged-key prefix. Returns `[next claim start, entries]`.
    static let boundedReadScript = """
        local limit, keep, stage = tonumber(ARGV[7]), tonumber(ARGV[8]), ARGV[9]
        local entries, nextStart = {}, ''
        if ARGV[1] == 'claim' then
            local r = redis.call('XAUTOCLAIM', KEYS[1], ARGV[2], ARGV[3], ARGV[6], ARGV[5], 'COUNT', ARGV[4])
            nextStart, entries = r[1], r[2]
        else
            local r = redis.call('XREADGROUP', 'GROUP', ARGV[2], ARGV[3], 'COUNT', ARGV[4], 'STREAMS', KEYS[1], ARGV[5])
            if r then entries = r[1][2] end
        end
        for _, e in ipairs(entries) do
            local f = e[2]
            if type(f) == 'table' then
                for i = 2, #f, 2 do
                    local v = f[i]
                    if #v > limit then
                        local key = stage .. ARGV[2] .. ':' .. ARGV[3] .. ':' .. e[1] .. ':' .. f[i - 1]
                        redis.call('SET', key, v, 'PX', 3600000)
                        f[i] = {#v, string.sub(v, 1, keep), key}
                    end
                end
            end
        end
        return {nextStart, entries}
        """

    private func boundedRead(_ arguments: [String]) throws(RedisError) -> RedisValue {
        // arguments: mode, group, consumer, count, id/start, min idle, limit.
        let argv = arguments + [String(keptBytes), "seatledger:oversize:\(url.key):"]
        return try connection.command(([ "EVAL", Self.boundedReadScript, "1", url.key] + argv).map { Data($0.utf8) })
    }

    /// `count` bytes of a staged oversize value from `offset` (fewer at its end).
    public func stagedRange(_ key: String, from offset: Int, count: Int) throws(RedisError) -> Data {
        guard count > 0 else { return Data() }
        if case .string(let data) = try connection.command("GETRANGE", key, String(offset), String(offset + count - 1)) { return data }
        return Data()
    }

    /// Deletes a staged oversize value once it has been read.
    public func deleteStaged(_ key: String) throws(RedisError) {
        _ = try connection.command("DEL", key)
    }
}
