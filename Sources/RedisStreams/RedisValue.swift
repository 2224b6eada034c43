import Foundation

/// A Redis reply.
public enum RedisValue: Sendable, Equatable {
    /// A bulk string, as bytes.
    case string(Data)
    /// A simple string reply (`+OK`).
    case status(String)
    /// An integer reply.
    case integer(Int64)
    /// An array of replies.
    case array([RedisValue])
    /// A null reply (a missing key or value).
    case null

    /// The reply as UTF-8 text, for bulk strings and statuses.
    public var text: String? {
        switch self {
        case .string(let data): return String(decoding: data, as: UTF8.self)
        case .status(let s): return s
        case .integer(let i): return String(i)
        default: return nil
        }
    }

    /// The elements of an array reply (empty otherwise).
    public var elements: [RedisValue] {
        if case .array(let items) = self { return items }
        return []
    }

    /// The integer of an integer reply.
    public var integer: Int64? {
        if case .integer(let i) = self { return i }
        return nil
    }
}

/// A Redis failure: connection, protocol or an error reply, with the command that caused it.
public struct RedisError: Error, Sendable, CustomStringConvertible {
    /// Whether the connection is unusable (reconnect) rather than the command refused.
    public let isConnectionError: Bool
    /// Redis's or hiredis's message.
    public let message: String
    /// The command name, if any.
    public let command: String?

    /// The text a person reads (what the CLI prints for it).
    public var description: String {
        "Redis \(isConnectionError ? "connection " : "")error: \(message)\(command.map { " (\($0))" } ?? "")"
    }

    /// An error with its message and command (`isConnectionError`: reconnect before trying again).
    public init(isConnectionError: Bool, message: String, command: String?) {
        self.isConnectionError = isConnectionError
        self.message = message
        self.command = command
    }

    /// Whether this is a `NOGROUP` (consumer group or stream missing) reply.
    public var isNoGroup: Bool { message.hasPrefix("NOGROUP") }

    /// Whether the server refused for now and will serve the same command later: it is loading its
    /// dataset after a restart (`LOADING`), running a script (`BUSY`), mid-failover (`TRYAGAIN`,
    /// `MASTERDOWN`).
    public var isTransient: Bool { ["LOADING", "BUSY", "TRYAGAIN", "MASTERDOWN"].contains { message.hasPrefix($0) } }
}
