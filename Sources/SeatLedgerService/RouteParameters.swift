import HTTPServer

/// The check of the query parameters each `/v1` route takes (``ServiceRoute/query``), and how many
/// times each may be given.
///
/// Any other name is refused with a 400 that names it and the ones the route takes: ignored, a
/// misspelt `asof` would answer about now while the caller believes the answer is about the
/// moment it asked for, and a second `limit` would be dropped without a word. `/notifications`,
/// the probes and `/metrics` are not checked: a notification URL configured in App Store Connect
/// with a query string of its own must still be stored.
enum RouteParameters {
    /// Refuses a parameter `route` does not take, or one given more often than it may be
    /// (``ServiceRoute/query``: nothing for an ``QueryRule/unchecked`` route).
    static func check(_ request: HTTPRequest, route: ServiceRoute) throws(APIError) {
        guard case .only(let taken) = route.query else { return }
        var seen: [String: Int] = [:]
        for (name, _) in request.query {
            guard let parameter = taken.first(where: { $0.name == name }) else {
                let names = taken.isEmpty ? "takes no query parameters" : "takes " + taken.map(\.name).joined(separator: ", ")
                let hint = taken.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map { " (did you mean \($0.name)?)" } ?? ""
                throw APIError(status: 400, code: "bad_parameter", message: "unknown query parameter \(name)\(hint): \(route.template) \(names)")
            }
            seen[name, default: 0] += 1
            if let count = seen[name], count > parameter.times {
                let allowed = parameter.times == 1 ? "once" : "at most \(parameter.times) times"
                throw APIError(status: 400, code: "bad_parameter", message: "query parameter \(name) is given \(request.queryValues(name).count) times; give it \(allowed)")
            }
        }
    }
}
