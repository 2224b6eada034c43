import CHiredis
import Foundation

/// One blocking Redis connection through hiredis, owned: freed in `deinit`.
///
/// Not thread-safe; one consumer loop owns one connection.
public final class RedisConnection {
    private let context: UnsafeMutablePointer<redisContext>
    /// Host and port it is connected to.
    public let host: String
    /// The TCP port it is connected to.
    public let port: Int

    /// Connects, waiting at most `timeoutMilliseconds`; commands time out after `commandTimeoutMilliseconds`.
    public init(host: String, port: Int, timeoutMilliseconds: Int = 2000, commandTimeoutMilliseconds: Int = 10_000) throws(RedisError) {
        guard let context = seatledger_redis_connect(host, Int32(port), timeoutMilliseconds) else {
            throw RedisError(isConnectionError: true, message: "cannot allocate a hiredis context", command: nil)
        }
        if context.pointee.err != 0 {
            let message = Self.errorText(context)
            redisFree(context)
            throw RedisError(isConnectionError: true, message: "cannot connect to \(host):\(port): \(message)", command: nil)
        }
        _ = seatledger_redis_set_timeout(context, commandTimeoutMilliseconds)
        self.context = context
        self.host = host
        self.port = port
    }

    deinit { redisFree(context) }

    private static func errorText(_ context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: context.pointee.errstr) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
    }

    /// Runs one command given as arguments (binary-safe).
    @discardableResult
    public func command(_ arguments: [Data]) throws(RedisError) -> RedisValue {
        let name = arguments.first.map { String(decoding: $0, as: UTF8.self) }
        let reply: UnsafeMutablePointer<redisReply>? = withArgv(arguments) { argc, argv, lengths in
            seatledger_redis_command_argv(context, argc, argv, lengths)
        }
        guard let reply else {
            throw RedisError(isConnectionError: true, message: Self.errorText(context), command: name)
        }
        defer { freeReplyObject(reply) }
        return try Self.convert(reply, command: name)
    }

    /// Runs one command given as strings.
    @discardableResult
    public func command(_ arguments: String...) throws(RedisError) -> RedisValue {
        try command(arguments.map { Data($0.utf8) })
    }

    private func withArgv<R>(_ arguments: [Data], _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> R) -> R {
        let buffers = arguments.map { data -> UnsafeMutablePointer<CChar> in
            let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: max(data.count, 1))
            data.withUnsafeBytes { raw in
                if let base = raw.baseAddress { pointer.withMemoryRebound(to: UInt8.self, capacity: data.count) { $0.update(from: base.assumingMemoryBound(to: UInt8.self), count: data.count) } }
            }
            return pointer
        }
        defer { buffers.forEach { $0.deallocate() } }
        var argv: [UnsafePointer<CChar>?] = buffers.map { UnsafePointer($0) }
        let lengths = arguments.map(\.count)
        return argv.withUnsafeMutableBufferPointer { argvBuffer in
            lengths.withUnsafeBufferPointer { lengthBuffer in
                body(Int32(arguments.count), argvBuffer.baseAddress!, lengthBuffer.baseAddress!)  // non-empty: arguments has the command
            }
        }
    }

    private static func convert(_ reply: UnsafeMutablePointer<redisReply>, command: String?) throws(RedisError) -> RedisValue {
        let r = reply.pointee
        switch r.type {
        case REDIS_REPLY_STRING:
            return .string(r.str.map { Data(bytes: $0, count: Int(r.len)) } ?? Data())
        case REDIS_REPLY_STATUS:
            return .status(r.str.map { String(cString: $0) } ?? "")
        case REDIS_REPLY_INTEGER:
            return .integer(Int64(r.integer))
        case REDIS_REPLY_NIL:
            return .null
        case REDIS_REPLY_ERROR:
            throw RedisError(isConnectionError: false, message: r.str.map { String(cString: $0) } ?? "error", command: command)
        case REDIS_REPLY_ARRAY:
            var items: [RedisValue] = []
            items.reserveCapacity(Int(r.elements))
            for index in 0..<Int(r.elements) {
                guard let element = r.element[index] else { items.append(.null); continue }
                items.append(try convert(element, command: command))
            }
            return .array(items)
        default:
            return .null
        }
    }
}
