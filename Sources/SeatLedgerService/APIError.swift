import AppStoreModels
import HTTPServer

/// An error answer of the service: a status and a JSON body naming the cause.
///
/// Body: `{"error": "<code>", "message": "<what was wrong, naming the input>"}`.
public struct APIError: Error, Sendable {
    /// The HTTP status.
    public let status: Int
    /// A stable machine code, e.g. `unauthorized`, `not_found`, `bad_parameter`.
    public let code: String
    /// The human reason.
    public let message: String
    /// Extra headers (`WWW-Authenticate`, `Allow`, `Retry-After`).
    public let headers: [(name: String, value: String)]
    /// Extra body fields next to `error` and `message` (the seat counts of a 409, Apple's error code).
    public let details: [String: JSONValue]

    /// Creates an error.
    public init(status: Int, code: String, message: String, headers: [(name: String, value: String)] = [],
                details: [String: JSONValue] = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
        self.details = details
    }

    /// The response carrying it.
    public var response: HTTPResponse {
        var fields = details
        fields["error"] = .string(code)
        fields["message"] = .string(message)
        let body = JSONValue.object(fields)
        return HTTPResponse(status: status, contentType: "application/json", text: body.prettyString() + "\n", headers: headers)
    }

    static func badParameter(_ name: String, _ value: String, expected: String) -> APIError {
        APIError(status: 400, code: "bad_parameter", message: "query parameter \(name)=\(value) is not \(expected)")
    }
}

extension HTTPResponse {
    /// A 200 JSON response: the value pretty-printed exactly as the CLI's `--json` prints it.
    static func json(_ value: JSONValue, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json", text: value.prettyString() + "\n")
    }
}
