import CMicroHTTPD
import Synchronization

/// Where libmicrohttpd's own messages go: until the daemon has started they are kept, so that a
/// failed start can say why in SeatLedger's error (`Failed to bind to port 8080: Address already
/// in use`) instead of libmicrohttpd printing its raw line on stderr first; after that, each goes
/// to ``HTTPServerConfiguration/log`` (dropped when that is `nil`).
///
/// `@unchecked Sendable` is safe: `logger` is written once, in `init`, and afterwards only read by
/// libmicrohttpd's threads through `seatledger_mhd_log`, until the daemon is stopped (the server
/// holds this object for as long as its daemon runs); `state` is a `Mutex`.
final class HTTPServerMessages: @unchecked Sendable {
    /// The C logger handed to `MHD_OPTION_EXTERNAL_LOGGER`; freed with this object.
    let logger: UnsafeMutablePointer<seatledger_mhd_logger>
    private let sink: (@Sendable (String) -> Void)?
    private let state = Mutex((started: false, pending: [String]()))

    init(sink: (@Sendable (String) -> Void)?) {
        self.sink = sink
        logger = .allocate(capacity: 1)
        logger.initialize(to: seatledger_mhd_logger(sink: { context, message in
            guard let context, let message else { return }
            Unmanaged<HTTPServerMessages>.fromOpaque(context).takeUnretainedValue().receive(String(cString: message))
        }, context: nil))
        logger.pointee.context = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        logger.deinitialize(count: 1)
        logger.deallocate()
    }

    /// One message from libmicrohttpd (its text may end in a newline).
    func receive(_ text: String) {
        var message = Substring(text)
        while message.last == "\n" || message.last == " " { message.removeLast() }
        guard !message.isEmpty else { return }
        let deliver = state.withLock { state -> Bool in
            if !state.started { state.pending.append(String(message)) }
            return state.started
        }
        if deliver { sink?(String(message)) }
    }

    /// The daemon started: what it said while starting goes to the sink, and so does all that follows.
    func markStarted() {
        let pending = state.withLock { state -> [String] in
            state.started = true
            defer { state.pending = [] }
            return state.pending
        }
        for message in pending { sink?(message) }
    }

    /// What libmicrohttpd said while failing to start, as one clause.
    var startFailure: String? {
        let pending = state.withLock { $0.pending }
        return pending.isEmpty ? nil : pending.joined(separator: "; ")
    }
}
