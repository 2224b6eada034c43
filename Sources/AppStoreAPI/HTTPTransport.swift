import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// One HTTP request as the client sends it. `headers` may hold the `Authorization` bearer token:
/// never log or record a request's headers.
public struct HTTPRequest: Sendable {
    /// `GET`, `POST`, `PUT`, `DELETE`.
    public var method: String
    /// The full URL (base URL, path and query).
    public var url: URL
    /// Header fields.
    public var headers: [String: String]
    /// The request body, if any.
    public var body: Data?
    /// Seconds before the request is abandoned.
    public var timeout: TimeInterval

    /// Creates a request.
    public init(method: String, url: URL, headers: [String: String] = [:], body: Data? = nil, timeout: TimeInterval = 30) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// One HTTP response.
public struct HTTPResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Header fields with lowercased names.
    public var headers: [String: String]
    /// The body bytes (empty when none).
    public var body: Data

    /// Creates a response; header names are lowercased.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.body = body
    }
}

/// A request that got no HTTP response at all.
public enum TransportError: Error, Sendable, CustomStringConvertible {
    /// No response within the request's timeout.
    case timedOut(seconds: TimeInterval)
    /// Connection refused, reset, DNS failure, TLS failure …
    case failed(String)

    /// Human-readable.
    public var description: String {
        switch self {
        case .timedOut(let seconds): return "no response within \(seconds) s (timed out)"
        case .failed(let reason): return "request failed without a response: \(reason)"
        }
    }
}

/// Sends HTTP requests. The production implementation is ``URLSessionTransport``; tests may
/// substitute a scripted one.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and waits for the whole response (or throws a ``TransportError``).
    func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse
}

/// ``HTTPTransport`` over FoundationNetworking's `URLSession` (no cookies, no cache), blocking the
/// calling thread until the response arrives or the timeout passes.
///
/// A response body is read up to ``maxBodyBytes``: past that the request is cancelled and fails
/// (`TransportError.failed`, naming the limit), so a misbehaving server or proxy cannot make the
/// process hold gigabytes. Apple's largest answers (a Get Notification History page, all
/// subscription statuses) are a few hundred KB.
///
/// Redirects are followed unless the transport is made with `followsRedirects: false`; then a
/// 3xx answer is returned as the response, body included (outgoing webhooks never follow one).
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession
    private let collector: ResponseCollector
    /// The largest response body read (default 4 MiB, the ingest's `--max-message-bytes`).
    public let maxBodyBytes: Int
    /// Whether a 3xx answer is followed to its `Location` (the default) or returned as the response.
    public let followsRedirects: Bool

    /// Creates a transport with its own ephemeral session.
    ///
    /// - Parameters:
    ///   - timeout: the session's request timeout (each request's own `timeout` is also enforced
    ///     by waiting at most that long).
    ///   - maxBodyBytes: the largest response body read before the request is abandoned.
    ///   - followsRedirects: `false` returns a 3xx answer as the response instead of following it.
    public init(timeout: TimeInterval = 60, maxBodyBytes: Int = 4 << 20, followsRedirects: Bool = true) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = Self.wholeSeconds(timeout)
        configuration.timeoutIntervalForResource = Self.wholeSeconds(timeout) * 2
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        self.maxBodyBytes = maxBodyBytes
        self.followsRedirects = followsRedirects
        collector = ResponseCollector(limit: maxBodyBytes, followsRedirects: followsRedirects)
        session = URLSession(configuration: configuration, delegate: collector, delegateQueue: nil)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Sends the request and blocks until it completes.
    public func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: Self.wholeSeconds(request.timeout))
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let task = session.dataTask(with: urlRequest)
        let done = collector.begin(task.taskIdentifier, timeout: request.timeout)
        task.resume()
        // The request's own timeout, enforced here: URLSession on Linux does not always apply
        // `URLRequest.timeoutInterval` when it is shorter than the session's.
        if done.wait(timeout: .now() + request.timeout) == .timedOut {
            task.cancel()
            _ = collector.finish(task.taskIdentifier)
            throw .timedOut(seconds: request.timeout)
        }
        guard let result = collector.finish(task.taskIdentifier) else { throw .failed("no result") }
        return try result.get()
    }

    /// `seconds` rounded up to whole seconds, at least 1: URLSession on Linux truncates its
    /// timeouts to whole seconds (0.5 s would become 0, an immediate timeout), so it is given
    /// whole ones and `send` enforces the exact timeout itself.
    static func wholeSeconds(_ seconds: TimeInterval) -> TimeInterval {
        max(1, seconds.rounded(.up))
    }
}

/// The session's delegate: collects each task's response and body (up to the limit, past which
/// it cancels the task), refuses redirects when told to, and signals the thread waiting in `send`.
///
/// `@unchecked Sendable` is safe: its only mutable state is `tasks`, a `Mutex`; URLSession calls the
/// delegate methods on its own queue, and `send` reads a task's entry only after its semaphore.
private final class ResponseCollector: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct Entry {
        let done = DispatchSemaphore(value: 0)
        let timeout: TimeInterval
        var response: HTTPURLResponse?
        var body = Data()
        var result: Result<HTTPResponse, TransportError>?
    }

    private let limit: Int
    private let followsRedirects: Bool
    private let tasks = Mutex<[Int: Entry]>([:])

    init(limit: Int, followsRedirects: Bool) {
        self.limit = limit
        self.followsRedirects = followsRedirects
    }

    /// Follows the redirect, or (with `followsRedirects` false) declines it: the 3xx response and
    /// its body are then delivered as the task's answer.
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(followsRedirects ? request : nil)
    }

    /// Registers a task before it starts; the semaphore is signalled when it completes.
    func begin(_ task: Int, timeout: TimeInterval) -> DispatchSemaphore {
        let entry = Entry(timeout: timeout)
        tasks.withLock { $0[task] = entry }
        return entry.done
    }

    /// The task's result, and forgets it.
    func finish(_ task: Int) -> Result<HTTPResponse, TransportError>? {
        tasks.withLock { $0.removeValue(forKey: task)?.result }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        tasks.withLock { $0[dataTask.taskIdentifier]?.response = response as? HTTPURLResponse }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let over: Bool = tasks.withLock { tasks in
            guard var entry = tasks[dataTask.taskIdentifier], entry.result == nil else { return false }
            guard entry.body.count + data.count <= limit else {
                entry.result = .failure(.failed("the response body passed \(limit) bytes (the transport's limit); not read further"))
                tasks[dataTask.taskIdentifier] = entry
                return true
            }
            entry.body.append(data)
            tasks[dataTask.taskIdentifier] = entry
            return false
        }
        if over { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let done: DispatchSemaphore? = tasks.withLock { tasks in
            guard var entry = tasks[task.taskIdentifier] else { return nil }
            if entry.result == nil {
                if let error {
                    let nsError = error as NSError
                    entry.result = nsError.domain == NSURLErrorDomain && nsError.code == NSURLErrorTimedOut
                        ? .failure(.timedOut(seconds: entry.timeout)) : .failure(.failed(nsError.localizedDescription))
                } else if let http = entry.response {
                    var headers: [String: String] = [:]
                    for (key, value) in http.allHeaderFields {
                        if let key = key as? String, let value = value as? String { headers[key] = value }
                    }
                    entry.result = .success(HTTPResponse(status: http.statusCode, headers: headers, body: entry.body))
                } else {
                    entry.result = .failure(.failed("not an HTTP response"))
                }
            }
            tasks[task.taskIdentifier] = entry
            return entry.done
        }
        done?.signal()
    }
}

/// A value behind a lock.
final class LockedValue<T: Sendable>: Sendable {
    private let mutex: Mutex<T>
    init(_ value: T) { mutex = Mutex(value) }
    func get() -> T { mutex.withLock { $0 } }
    func set(_ value: T) { mutex.withLock { $0 = value } }
    func update<R>(_ body: (inout T) -> R) -> R { mutex.withLock { body(&$0) } }
}
