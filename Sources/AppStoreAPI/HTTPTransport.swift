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
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession

    /// Creates a transport with its own ephemeral session.
    ///
    /// - Parameter timeout: the session's request timeout (each request's own `timeout` is also
    ///   enforced by waiting at most that long).
    public init(timeout: TimeInterval = 60) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout * 2
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Sends the request and blocks until it completes.
    public func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: request.timeout)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let box = ResultBox()
        let done = DispatchSemaphore(value: 0)
        let task = session.dataTask(with: urlRequest) { data, response, error in
            if let error {
                let nsError = error as NSError
                if nsError.domain == NSURLErrorDomain && nsError.code == NSURLErrorTimedOut {
                    box.set(.failure(.timedOut(seconds: request.timeout)))
                } else {
                    box.set(.failure(.failed(nsError.localizedDescription)))
                }
            } else if let http = response as? HTTPURLResponse {
                var headers: [String: String] = [:]
                for (key, value) in http.allHeaderFields {
                    if let key = key as? String, let value = value as? String { headers[key] = value }
                }
                box.set(.success(HTTPResponse(status: http.statusCode, headers: headers, body: data ?? Data())))
            } else {
                box.set(.failure(.failed("not an HTTP response")))
            }
            done.signal()
        }
        task.resume()
        // The request's own timeout, enforced here: URLSession on Linux does not always apply
        // `URLRequest.timeoutInterval` when it is shorter than the session's.
        if done.wait(timeout: .now() + request.timeout) == .timedOut {
            task.cancel()
            throw .timedOut(seconds: request.timeout)
        }
        guard let result = box.get() else { throw .failed("no result") }
        return try result.get()
    }
}

/// The completion handler's result, handed across threads.
private final class ResultBox: Sendable {
    private let value = Mutex<Result<HTTPResponse, TransportError>?>(nil)
    func set(_ result: Result<HTTPResponse, TransportError>) { value.withLock { $0 = result } }
    func get() -> Result<HTTPResponse, TransportError>? { value.withLock { $0 } }
}

/// A value behind a lock.
final class LockedValue<T: Sendable>: Sendable {
    private let mutex: Mutex<T>
    init(_ value: T) { mutex = Mutex(value) }
    func get() -> T { mutex.withLock { $0 } }
    func set(_ value: T) { mutex.withLock { $0 = value } }
    func update<R>(_ body: (inout T) -> R) -> R { mutex.withLock { body(&$0) } }
}
