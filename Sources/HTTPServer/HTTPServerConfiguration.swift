import Foundation

/// How an ``HTTPServer`` listens and what it tolerates from clients.
public struct HTTPServerConfiguration: Sendable {
    /// The IPv4 address to bind, e.g. `127.0.0.1` or `0.0.0.0`.
    public var host: String
    /// The TCP port; 0 lets the kernel choose (read it back from ``HTTPServer/port``).
    public var port: UInt16
    /// libmicrohttpd's polling threads (thread-pool mode: each runs an epoll loop over its share of
    /// the connections). `async` handlers run as Swift tasks, so a slow one holds no polling
    /// thread; the server's `immediate` answers run on them (``defaultThreads``).
    public var threads: Int
    /// At most this many open connections; beyond it new connections are refused at accept.
    public var connectionLimit: Int
    /// A connection idle (or trickling a request) this many seconds is closed.
    public var connectionTimeoutSeconds: Int
    /// The largest request body accepted; a larger one is answered by the oversize handler (413).
    public var maxBodyBytes: Int
    /// An oversize body is read and hashed (so the log can name it) up to this many bytes; past
    /// it the server answers at once and closes the connection.
    public var maxDiscardedBodyBytes: Int
    /// Memory libmicrohttpd may use per connection for headers and read buffers.
    public var connectionMemoryLimit: Int
    /// The `listen(2)` backlog.
    public var listenBacklog: Int
    /// Where libmicrohttpd's own messages go once the server runs (a connection it dropped, an
    /// error it met): one line each; `nil` drops them. A failure to start is thrown as
    /// ``HTTPServerError`` with libmicrohttpd's reason, never printed.
    public var log: (@Sendable (String) -> Void)? = nil

    /// One polling thread per core, at least two: the reads a polling thread answers itself keep
    /// a core busy, and more threads than cores only add preemption (and tail latency).
    public static var defaultThreads: Int { max(2, ProcessInfo.processInfo.activeProcessorCount) }

    /// Creates a configuration; the defaults suit a webhook receiver behind a reverse proxy.
    public init(host: String = "127.0.0.1", port: UInt16 = 8080, threads: Int = HTTPServerConfiguration.defaultThreads, connectionLimit: Int = 1_024,
                connectionTimeoutSeconds: Int = 30, maxBodyBytes: Int = 1 << 20, maxDiscardedBodyBytes: Int = 16 << 20,
                connectionMemoryLimit: Int = 64 << 10, listenBacklog: Int = 1_024) {
        self.host = host
        self.port = port
        self.threads = threads
        self.connectionLimit = connectionLimit
        self.connectionTimeoutSeconds = connectionTimeoutSeconds
        self.maxBodyBytes = maxBodyBytes
        self.maxDiscardedBodyBytes = maxDiscardedBodyBytes
        self.connectionMemoryLimit = connectionMemoryLimit
        self.listenBacklog = listenBacklog
    }

    /// Parses `HOST:PORT` (an IPv4 address and a port), as `--listen` takes it.
    public static func parseListen(_ text: String) -> (host: String, port: UInt16)? {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else { return nil }
        let host = String(text[..<colon])
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts.allSatisfy({ UInt8($0) != nil }) else { return nil }
        return (host, port)
    }
}

/// Why a server could not start.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    /// What failed, naming the address.
    public let message: String
    /// Creates an error.
    public init(_ message: String) { self.message = message }
    /// The text a person reads (what the CLI prints for it).
    public var description: String { message }
}
