import HTTPServer

/// The query parameters each `/v1` route takes, and how many times each may be given.
///
/// Any other name is refused with a 400 that names it and the ones the route takes: ignored, a
/// misspelt `asof` would answer about now while the caller believes the answer is about the
/// moment it asked for, and a second `limit` would be dropped without a word. `/notifications`,
/// the probes and `/metrics` are not checked: a notification URL configured in App Store Connect
/// with a query string of its own must still be stored.
enum RouteParameters {
    /// A parameter a route takes: its name and how many times it may be given.
    struct Parameter: Sendable {
        let name: String
        let times: Int
    }

    private static func once(_ names: String...) -> [Parameter] { names.map { Parameter(name: $0, times: 1) } }

    /// The parameters of each route template (``LedgerService``'s route names).
    static let byRoute: [String: [Parameter]] = [
        "/v1/members/{id}": once("asOf", "knownAt"),
        "/v1/groups/{ref}": once("asOf", "knownAt"),
        "/v1/groups": once("asOf", "knownAt", "limit", "cursor", "status", "product"),
        "/v1/groups/{ref}/replay": once("from", "to", "knownAt"),
        "/v1/groups/{ref}/diff": [Parameter(name: "knownAt", times: 2), Parameter(name: "asOf", times: 2), Parameter(name: "against", times: 1)],
        "/v1/groups/{ref}/audit": once("format", "asOf"),
        "/v1/changes": once("after", "limit", "wait"),
        "/v1/groups/{ref}/seats": [],
        "/v1/groups/{ref}/seats/{seatClaimId}": [],
        "/v1/groups/{ref}/seats/{seatClaimId}/associate": [],
    ]

    /// Refuses a parameter `route` does not take, or one given more often than it may be.
    static func check(_ request: HTTPRequest, route: String) throws(APIError) {
        let taken = byRoute[route] ?? []
        var seen: [String: Int] = [:]
        for (name, _) in request.query {
            guard let parameter = taken.first(where: { $0.name == name }) else {
                let names = taken.isEmpty ? "takes no query parameters" : "takes " + taken.map(\.name).joined(separator: ", ")
                let hint = taken.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map { " (did you mean \($0.name)?)" } ?? ""
                throw APIError(status: 400, code: "bad_parameter", message: "unknown query parameter \(name)\(hint): \(route) \(names)")
            }
            seen[name, default: 0] += 1
            if let count = seen[name], count > parameter.times {
                let allowed = parameter.times == 1 ? "once" : "at most \(parameter.times) times"
                throw APIError(status: 400, code: "bad_parameter", message: "query parameter \(name) is given \(request.queryValues(name).count) times; give it \(allowed)")
            }
        }
    }
}
