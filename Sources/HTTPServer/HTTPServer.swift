import CMicroHTTPD
import Foundation
import Glibc
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd: keep-alive, pipelining and `Expect: 100-continue` are
/// the library's; this type owns the `MHD_Daemon`, collects each request and hands it to an
/// `async` handler.
///
/// libmicrohttpd runs a pool of epoll threads (``HTTPServerConfiguration/threads``). When a
/// request is complete its connection is *suspended* and the handler runs as a Swift task; when
/// the task returns, the connection is resumed and the response queued. No libmicrohttpd thread
/// waits for a handler and no thread at all waits for the network or a commit, so a long-poll or
/// a commit in progress holds none. Handler tasks prefer the server's own ``HandlerExecutor``
/// threads, so a busy global cooperative pool elsewhere in the process cannot starve them.
///
/// A request that a short blocking computation answers (a read of a few milliseconds at most)
/// may instead be answered by `immediate`, on the libmicrohttpd thread that received it, with no
/// suspension and no task (``ImmediateAnswer/response(_:)``), or started there and answered from
/// another thread later, with the connection suspended meanwhile and no task
/// (``ImmediateAnswer/later(_:)``); ``ImmediateAnswer/notTaken`` leaves it to the `async` handler.
///
/// ```swift
/// let server = try HTTPServer(configuration: .init(port: 0)) { request in
///     HTTPResponse(status: 200, contentType: "text/plain", text: "hello")
/// } oversize: { _ in HTTPResponse(status: 413) }
/// print(server.port)
/// ```
///
/// `@unchecked Sendable` is safe: `daemon` is set once in `init` and only passed to
/// libmicrohttpd's thread-safe calls (`MHD_quiesce_daemon`, `MHD_stop_daemon` once, under
/// `stopped`, which also holds the quiesced listening socket); the rest of the state is in
/// ``HTTPServerCore``, which is `Sendable`.
public final class HTTPServer: @unchecked Sendable {
    /// The port the server listens on (the kernel's choice when configured with port 0).
    public let port: UInt16
    /// The configuration it was started with.
    public let configuration: HTTPServerConfiguration
    private let daemon: OpaquePointer
    private let core: HTTPServerCore
    private let retainedCore: Unmanaged<HTTPServerCore>
    /// libmicrohttpd's own messages (kept for as long as the daemon may write them).
    private let messages: HTTPServerMessages
    /// Whether the daemon was stopped, and the listening socket ``stopAccepting()`` took back from
    /// it (closed only once the daemon is stopped).
    private let stopped = Mutex((isStopped: false, quiescedSocket: Int32(-1)))

    /// Starts listening; `immediate` sees each complete request first, on the receiving thread
    /// (it may block briefly, never for long: ``ImmediateAnswer``), `handler` answers every
    /// complete request `immediate` does not take, `oversize` each request whose body exceeds
    /// ``HTTPServerConfiguration/maxBodyBytes`` (nothing of it is kept).
    public init(configuration: HTTPServerConfiguration,
                immediate: (@Sendable (HTTPRequest) -> ImmediateAnswer)? = nil,
                handler: @escaping @Sendable (HTTPRequest) async -> HTTPResponse,
                oversize: @escaping @Sendable (OversizeRequest) -> HTTPResponse) throws(HTTPServerError) {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = configuration.port.bigEndian
        guard inet_pton(AF_INET, configuration.host, &address.sin_addr) == 1 else {
            throw HTTPServerError("cannot listen on \(configuration.host):\(configuration.port): not an IPv4 address")
        }
        let core = HTTPServerCore(configuration: configuration, immediate: immediate, handler: handler, oversize: oversize)
        let retained = Unmanaged.passRetained(core)
        let messages = HTTPServerMessages(sink: configuration.log)
        let started = seatledger_mhd_start(seatledger_mhd_flags(), &address, accessHandler, retained.toOpaque(),
                                           requestCompleted, retained.toOpaque(),
                                           UInt32(max(1, configuration.threads)), UInt32(max(1, configuration.connectionLimit)),
                                           UInt32(max(0, configuration.connectionTimeoutSeconds)),
                                           configuration.connectionMemoryLimit, UInt32(max(1, configuration.listenBacklog)),
                                           messages.logger)
        guard let started else {
            retained.release()
            throw HTTPServerError("cannot listen on \(configuration.host):\(configuration.port): "
                + (messages.startFailure ?? "libmicrohttpd could not start (the address is in use, or not this machine's)"))
        }
        messages.markStarted()
        self.messages = messages
        self.daemon = started
        self.core = core
        self.retainedCore = retained
        self.configuration = configuration
        self.port = seatledger_mhd_bound_port(started)
    }

    deinit { stop(drainTimeout: .zero) }

    /// Requests whose body is complete (or answered early) and not yet completed (answered and
    /// sent, or their connection dropped): what ``stop(drainTimeout:)`` waits for.
    public var activeRequests: Int { core.activeRequests }

    /// Stops accepting new connections (the listening socket is closed); open connections are
    /// still served, each response now says `Connection: close`.
    ///
    /// The socket is shut down at once, so a connect is refused from then on, and closed only after
    /// `MHD_stop_daemon`: libmicrohttpd's internal thread may still be using it, and a descriptor
    /// closed earlier could be reused meanwhile by another socket of the process (a test suite
    /// starts many servers at once; `HTTPServerTests.stopDrains` once saw a connect succeed here).
    public func stopAccepting() {
        stopped.withLock { state in
            guard !state.isStopped, !core.isQuiesced else { return }
            core.markQuiesced()
            let socket = MHD_quiesce_daemon(daemon)
            if socket >= 0 {
                // On Linux, shutting down a listening socket ends the listen: connects get a reset.
                shutdown(socket, Int32(SHUT_RDWR))
                state.quiescedSocket = socket
            }
        }
    }

    /// Stops accepting, waits up to `drainTimeout` for requests in progress to be answered, then
    /// stops the daemon (closing every connection). Returns whether every request was answered.
    /// A request counts as in progress once its body is complete: one still arriving (a client
    /// that sent part of its body and went silent or left) is not waited for, and is closed.
    @discardableResult
    public func stop(drainTimeout: Duration = .seconds(10)) -> Bool {
        stopAccepting()
        let drained = core.waitUntilIdle(timeout: drainTimeout)
        stopped.withLock { state in
            guard !state.isStopped else { return }
            state.isStopped = true
            // A connection suspended for a handler still running is resumed by that handler's task
            // only while the core says the daemon runs: no resume after this point.
            core.markStopping()
            MHD_stop_daemon(daemon)
            if state.quiescedSocket >= 0 { close(state.quiescedSocket) }
            core.executor.shutdown()
            retainedCore.release()
        }
        return drained
    }
}

/// A connection pointer crossing from libmicrohttpd's thread to the handler's task.
///
/// `@unchecked Sendable` is safe: the task only passes it to `MHD_resume_connection`, which
/// libmicrohttpd allows from any thread, and only while the daemon runs (``HTTPServerCore/resume(_:)``).
struct ConnectionHandle: @unchecked Sendable, Hashable {
    let pointer: OpaquePointer
}

/// The state libmicrohttpd's callbacks share: configuration, handlers, request counts.
final class HTTPServerCore: Sendable {
    let configuration: HTTPServerConfiguration
    let immediate: (@Sendable (HTTPRequest) -> ImmediateAnswer)?
    let handler: @Sendable (HTTPRequest) async -> HTTPResponse
    let oversize: @Sendable (OversizeRequest) -> HTTPResponse
    /// Where handlers run (threads of the server's own, not Swift's global pool).
    let executor: HandlerExecutor
    /// Requests in progress, whether the listening socket is closed, whether the daemon is being
    /// stopped, and the connections suspended while their handler runs.
    private let state = Mutex((active: 0, quiesced: false, stopping: false, suspended: Set<ConnectionHandle>()))
    private let idle = NSCondition()

    init(configuration: HTTPServerConfiguration, immediate: (@Sendable (HTTPRequest) -> ImmediateAnswer)?,
         handler: @escaping @Sendable (HTTPRequest) async -> HTTPResponse, oversize: @escaping @Sendable (OversizeRequest) -> HTTPResponse) {
        self.configuration = configuration
        self.immediate = immediate
        self.handler = handler
        self.oversize = oversize
        self.executor = HandlerExecutor(threads: max(2, configuration.threads), name: "http-handler")
    }

    var activeRequests: Int { state.withLock { $0.active } }
    var isQuiesced: Bool { state.withLock { $0.quiesced } }
    func markQuiesced() { state.withLock { $0.quiesced = true } }
    /// No resume after this; every connection still suspended is resumed now, since
    /// libmicrohttpd refuses to stop with suspended connections (it closes them instead).
    func markStopping() {
        state.withLock { state in
            state.stopping = true
            for connection in state.suspended { MHD_resume_connection(connection.pointer) }
            state.suspended = []
        }
    }

    /// Suspends a connection while its handler runs.
    func suspend(_ connection: ConnectionHandle) {
        state.withLock { state in
            MHD_suspend_connection(connection.pointer)
            state.suspended.insert(connection)
        }
    }

    func requestStarted() { state.withLock { $0.active += 1 } }

    /// Counts `context`'s request as in flight (once): its body is complete, or it is answered early.
    func startInFlight(_ context: RequestContext) {
        guard !context.inFlight else { return }
        context.inFlight = true
        requestStarted()
    }

    func requestFinished() {
        let nowIdle = state.withLock { state -> Bool in
            state.active -= 1
            return state.active == 0
        }
        if nowIdle {
            idle.lock()
            idle.broadcast()
            idle.unlock()
        }
    }

    /// Waits until no request is in progress, or `timeout` passes; whether it became idle.
    func waitUntilIdle(timeout: Duration) -> Bool {
        let deadline = Date().addingTimeInterval(Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        idle.lock()
        defer { idle.unlock() }
        while activeRequests > 0 {
            if !idle.wait(until: deadline) { return activeRequests == 0 }
        }
        return true
    }

    /// Resumes a suspended connection unless the daemon is being stopped.
    func resume(_ connection: ConnectionHandle) {
        state.withLock { state in
            guard !state.stopping, state.suspended.remove(connection) != nil else { return }
            MHD_resume_connection(connection.pointer)
        }
    }
}
