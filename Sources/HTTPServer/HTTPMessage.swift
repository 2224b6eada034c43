import Foundation

/// One complete HTTP request as the server received it: method, path, query, headers and body.
public struct HTTPRequest: Sendable {
    /// The method, e.g. `GET`.
    public let method: String
    /// The path without its query string, percent-decoded by libmicrohttpd (e.g. `/v1/groups/2000000000000001`).
    public let path: String
    /// Query parameters in order of appearance (a name may repeat), decoded.
    public let query: [(name: String, value: String)]
    /// Request headers in order of appearance; names as the client sent them.
    public let headers: [(name: String, value: String)]
    /// The body bytes exactly as received (empty when there is none).
    public let body: Data

    /// Creates a request (the server builds these; tests of handlers may too).
    public init(method: String, path: String, query: [(name: String, value: String)] = [],
                headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// The first value of header `name` (case-insensitive), if present.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Every value of query parameter `name`, in order.
    public func queryValues(_ name: String) -> [String] {
        query.filter { $0.name == name }.map(\.value)
    }

    /// The first value of query parameter `name`, if present.
    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }
}

/// A response to send: status, headers and body.
public struct HTTPResponse: Sendable {
    /// The status code, e.g. 200.
    public var status: Int
    /// Headers to add (libmicrohttpd adds `Content-Length`, `Date` and `Connection` itself).
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: Data

    /// Creates a response.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response with a text body of `contentType`.
    public init(status: Int, contentType: String, text: String, headers: [(name: String, value: String)] = []) {
        self.init(status: status, headers: [("Content-Type", contentType)] + headers, body: Data(text.utf8))
    }
}

/// A request whose body exceeded ``HTTPServerConfiguration/maxBodyBytes``: what is known of it.
///
/// Its body was read (up to ``HTTPServerConfiguration/maxDiscardedBodyBytes``) and hashed, never
/// kept, so the log can name it and the client can be told 413.
public struct OversizeRequest: Sendable {
    /// The method.
    public let method: String
    /// The path.
    public let path: String
    /// The `Content-Length` the client declared, if any.
    public let declaredLength: Int?
    /// How many body bytes arrived before the server answered.
    public let receivedBytes: Int
    /// Lowercase hex SHA-256 of the body, when all of it arrived; `nil` when the server answered
    /// before reading it all (declared or sent beyond ``HTTPServerConfiguration/maxDiscardedBodyBytes``).
    public let sha256: String?
}

/// What a server's `immediate` handler did with a complete request, on the polling thread that
/// received it.
public enum ImmediateAnswer: Sendable {
    /// Answered now.
    case response(HTTPResponse)
    /// Started now and answered later: the connection is suspended, then `start` is called with
    /// the function that answers it, to be called exactly once, from any thread, with what makes
    /// the response; the polling thread makes it when it sends it (so a thread that must stay
    /// free, a ledger's writer, only hands the answer on).
    case later(_ start: @Sendable (_ respond: @escaping @Sendable (_ answer: @escaping @Sendable () -> HTTPResponse) -> Void) -> Void)
    /// Not taken: the server's `async` handler answers it.
    case notTaken
}
