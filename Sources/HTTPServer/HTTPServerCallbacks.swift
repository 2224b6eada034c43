import CMicroHTTPD
import Foundation
import JWSVerification
import Synchronization

/// One request's state between libmicrohttpd's calls: the body so far, then the handler's response.
///
/// `@unchecked Sendable` is safe: libmicrohttpd calls the access handler for one connection on
/// one thread at a time, so `body`, `hasher`, `receivedBytes` and `phase` are touched serially;
/// the thread that answers (the handler's task, or whichever thread calls an immediate answer's
/// `respond`) only writes `answer` (a `Mutex`) before resuming the connection, after which
/// libmicrohttpd's thread reads it and makes the response.
final class RequestContext: @unchecked Sendable {
    enum Phase { case receiving, oversize, dispatched, answered }

    var phase = Phase.receiving
    /// Whether the request counts as in flight for ``HTTPServer/stop(drainTimeout:)``: from when its
    /// body is complete (or it is answered early) until libmicrohttpd reports it completed. A
    /// request whose body is still arriving is not waited for, so a client that sent part of one
    /// and left cannot hold `stop` until libmicrohttpd's connection timeout.
    var inFlight = false
    var body = Data()
    var receivedBytes = 0
    var hasher: SHA256Hasher?
    let declaredLength: Int?
    /// What makes the answer, once the handler has it (made on the polling thread that sends it).
    let answer = Mutex<(@Sendable () -> HTTPResponse)?>(nil)

    init(declaredLength: Int?) { self.declaredLength = declaredLength }

    /// Switches to discarding: the body so far goes into the hash, no longer kept.
    func startDiscarding() {
        let hasher = SHA256Hasher()
        hasher.update(body)
        body = Data()
        self.hasher = hasher
        phase = .oversize
    }
}

/// Collects the headers or query arguments libmicrohttpd iterates over.
private final class PairCollector {
    var pairs: [(name: String, value: String)] = []
}

private let collectPair: MHD_KeyValueIterator = { context, _, key, value in
    guard let context, let key else { return .YES }
    let collector = Unmanaged<PairCollector>.fromOpaque(context).takeUnretainedValue()
    collector.pairs.append((String(cString: key), value.map { String(cString: $0) } ?? ""))
    return .YES
}

private func values(_ connection: OpaquePointer, _ kind: MHD_ValueKind) -> [(name: String, value: String)] {
    let collector = PairCollector()
    withExtendedLifetime(collector) {
        _ = MHD_get_connection_values(connection, kind, collectPair, Unmanaged.passUnretained(collector).toOpaque())
    }
    return collector.pairs
}

/// Queues `response` on `connection`; `close` adds `Connection: close` (the server is stopping).
private func queue(_ response: HTTPResponse, on connection: OpaquePointer, close: Bool) -> MHD_Result {
    let created: OpaquePointer? = response.body.withUnsafeBytes { bytes in
        if bytes.count == 0 {
            // An empty body still needs an address: a byte of this call's own (libmicrohttpd copies
            // the zero bytes it points at before returning), so no global is shared between threads.
            var empty: UInt8 = 0
            return withUnsafeMutablePointer(to: &empty) { MHD_create_response_from_buffer(0, $0, .RESPMEM_MUST_COPY) }
        }
        return MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress!), .RESPMEM_MUST_COPY)
    }
    guard let created else { return .NO }
    defer { MHD_destroy_response(created) }
    for (name, value) in response.headers { _ = MHD_add_response_header(created, name, value) }
    if close { _ = MHD_add_response_header(created, "Connection", "close") }
    return MHD_queue_response(connection, UInt32(response.status), created)
}

/// libmicrohttpd's access handler: called when the headers are in, for each piece of body, and
/// once more when the body is complete (and again after a resume).
let accessHandler: MHD_AccessHandlerCallback = { serverContext, connection, url, method, _, uploadData, uploadSize, requestContext in
    guard let serverContext, let connection, let uploadSize, let requestContext else { return .NO }
    let core = Unmanaged<HTTPServerCore>.fromOpaque(serverContext).takeUnretainedValue()
    let configuration = core.configuration
    let methodText = method.map { String(cString: $0) } ?? ""
    let pathText = url.map { String(cString: $0) } ?? "/"

    guard let existing = requestContext.pointee else {
        // Headers complete. Returning without a response lets libmicrohttpd answer
        // `Expect: 100-continue` with 100 and read the body.
        let declared = MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length")
            .flatMap { Int(String(cString: $0)) }
        let context = RequestContext(declaredLength: declared)
        requestContext.pointee = Unmanaged.passRetained(context).toOpaque()
        if let declared, declared > configuration.maxBodyBytes {
            context.startDiscarding()
            if declared > configuration.maxDiscardedBodyBytes {
                // Too large even to read through: answer now (libmicrohttpd then closes the connection).
                core.startInFlight(context)
                context.phase = .answered
                let report = OversizeRequest(method: methodText, path: pathText, declaredLength: declared, receivedBytes: 0, sha256: nil)
                return queue(core.oversize(report), on: connection, close: true)
            }
        }
        return .YES
    }
    let context = Unmanaged<RequestContext>.fromOpaque(existing).takeUnretainedValue()

    if uploadSize.pointee > 0 {
        let count = uploadSize.pointee
        uploadSize.pointee = 0
        context.receivedBytes += count
        guard let uploadData else { return .YES }
        let bytes = UnsafeRawBufferPointer(start: uploadData, count: count)
        switch context.phase {
        case .receiving:
            if context.receivedBytes > configuration.maxBodyBytes {
                context.startDiscarding()
                context.hasher?.update(bytes)
            } else {
                context.body.append(bytes.assumingMemoryBound(to: UInt8.self))
            }
        case .oversize:
            context.hasher?.update(bytes)
        case .dispatched, .answered:
            break
        }
        if context.phase == .oversize, context.receivedBytes > configuration.maxDiscardedBodyBytes {
            core.startInFlight(context)
            context.phase = .answered
            let report = OversizeRequest(method: methodText, path: pathText, declaredLength: context.declaredLength,
                                         receivedBytes: context.receivedBytes, sha256: nil)
            return queue(core.oversize(report), on: connection, close: true)
        }
        return .YES
    }

    // The body is complete: from here until completion the request is in flight.
    core.startInFlight(context)
    switch context.phase {
    case .receiving:
        let request = HTTPRequest(method: methodText, path: pathText, query: values(connection, .GET_ARGUMENT_KIND),
                                  headers: values(connection, .HEADER_KIND), body: context.body)
        context.body = Data()
        let handle = ConnectionHandle(pointer: connection)
        // Called once with the answer, from any thread: libmicrohttpd calls this handler again
        // after the resume, in phase `.dispatched`, and queues it.
        let respond: @Sendable (@escaping @Sendable () -> HTTPResponse) -> Void = { answer in
            context.answer.withLock { $0 = answer }
            core.resume(handle)
        }
        switch core.immediate?(request) ?? .notTaken {
        case .response(let response):
            context.phase = .answered
            return queue(response, on: connection, close: core.isQuiesced)
        case .later(let start):
            context.phase = .dispatched
            core.suspend(handle)
            start(respond)
        case .notTaken:
            context.phase = .dispatched
            core.suspend(handle)
            let handler = core.handler
            Task(executorPreference: core.executor) {
                let response = await handler(request)
                respond { response }
            }
        }
        return .YES
    case .oversize:
        context.phase = .answered
        let digest = context.hasher.map { SHA256Digest.lowercaseHex($0.finalize()) }
        let report = OversizeRequest(method: methodText, path: pathText, declaredLength: context.declaredLength,
                                     receivedBytes: context.receivedBytes, sha256: digest)
        return queue(core.oversize(report), on: connection, close: core.isQuiesced)
    case .dispatched:
        guard let answer = context.answer.withLock({ $0.take() }) else { return .YES }
        context.phase = .answered
        return queue(answer(), on: connection, close: core.isQuiesced)
    case .answered:
        return .YES
    }
}

/// libmicrohttpd's completion callback: the response was sent, or the connection dropped.
let requestCompleted: MHD_RequestCompletedCallback = { serverContext, _, requestContext, _ in
    guard let serverContext, let requestContext, let existing = requestContext.pointee else { return }
    requestContext.pointee = nil
    let context = Unmanaged<RequestContext>.fromOpaque(existing)
    let inFlight = context.takeUnretainedValue().inFlight
    context.release()
    if inFlight { Unmanaged<HTTPServerCore>.fromOpaque(serverContext).takeUnretainedValue().requestFinished() }
}
