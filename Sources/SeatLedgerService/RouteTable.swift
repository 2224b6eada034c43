import AppStoreModels
import HTTPServer

/// The token a route needs: none, or a bearer token one of whose scopes is the route's
/// (``APITokenRecord/knownScopes``: a token may carry several).
enum RouteScope: String, Sendable, CaseIterable {
    /// No token (the webhook, whose signature is its authentication; the probes; the document).
    case none
    /// Scope `read`: the `/v1` read API.
    case read
    /// Scope `seats`: the seat operations through the App Store Server API.
    case seats
    /// Scope `link`: linking StoreKit transactions to members (`POST /v1/storekit`).
    case link
    /// Scope `record`: recording App Store Server API responses the app server got (`POST /v1/api-responses`).
    case record

    /// The scope a token must have, or `nil` when none is needed.
    var tokenScope: String? { self == .none ? nil : rawValue }

    /// What a token of this scope opens, for the OpenAPI document's security scheme.
    var opens: String {
        switch self {
        case .none: return "nothing"
        case .read: return "the `/v1` read API"
        case .seats: return "the seat operations"
        case .link: return "linking StoreKit transactions"
        case .record: return "recording App Store Server API responses"
        }
    }
}

/// A query parameter a route takes: its name, how many times it may be given, and what the
/// OpenAPI document says of it.
struct QueryParameter: Sendable {
    let name: String
    let times: Int
    /// The JSON Schema of one value (OpenAPI `schema`; an array of them when given more than once).
    let schema: JSONValue
    let description: String

    init(_ name: String, times: Int = 1, schema: JSONValue = ["type": "string"], _ description: String) {
        self.name = name
        self.times = times
        self.schema = schema
        self.description = description
    }
}

/// Which query strings a route accepts.
enum QueryRule: Sendable {
    /// Any query string, unread: a notification URL configured in App Store Connect with a query
    /// string of its own must still be stored; probes and the document ignore theirs.
    case unchecked
    /// Only these parameters, each at most its `times` (``RouteParameters``).
    case only([QueryParameter])

    /// The parameters a checked route takes (none for ``unchecked``).
    var parameters: [QueryParameter] {
        if case .only(let parameters) = self { return parameters }
        return []
    }
}

/// What the server's polling thread does itself with a request on a route
/// (``LedgerService/handleImmediately(_:)``); a route without one is answered by the async handler.
enum PollingThreadAnswer: Sendable {
    /// Answered on the polling thread by one short blocking read, after the token (checked
    /// blocking) and the query parameters.
    case blockingRead(@Sendable (LedgerService, RouteMatch) throws -> HTTPResponse)
    /// Handed on from the polling thread (a notification to the writer), answered later.
    case handedOn(@Sendable (LedgerService, RouteMatch) -> ImmediateAnswer)
}

/// How a `/v1` route uses the ledgers a request may reach (``LedgerService/candidates(_:)``).
enum LedgerUse: Sendable {
    /// One ledger: a page, a feed, or a body to append (`ledger`, the token's only ledger, or the
    /// one the body's app and environment name); else 400 `ledger_required`.
    case one
    /// The one ledger that knows the reference; 409 `ambiguous_reference` when several do.
    case search
    /// Every ledger's answer, merged.
    case merged
}

/// One segment of a path template.
enum TemplateSegment: Sendable, Equatable {
    case literal(String)
    /// `{name}`: any non-empty segment.
    case parameter(String)
}

/// A route of `seatledger serve`, declared once in ``RouteTable/service``: dispatch, the 405 with
/// `Allow`, the query-parameter check, the metric `route` label and the OpenAPI document's path
/// item all come from it.
struct ServiceRoute: Sendable {
    /// The methods it answers (`GET` also answers `HEAD`).
    let methods: [String]
    /// The path template, e.g. `/v1/groups/{ref}`: the metric label and the document's path.
    let template: String
    let scope: RouteScope
    let query: QueryRule
    /// How it uses the deployment's ledgers (its OpenAPI errors).
    let ledgers: LedgerUse
    /// The answer on the polling thread, if it has one.
    let immediate: PollingThreadAnswer?
    /// The answer by the async handler (also for an ``immediate`` route when ``LedgerService/handle(_:)`` is called).
    let handler: @Sendable (LedgerService, RouteMatch, inout [String: JSONValue]) async throws -> HTTPResponse
    /// What the OpenAPI document says of it.
    let document: RouteDocument
    /// The template's segments after the leading `/`.
    let segments: [TemplateSegment]
    /// The names of the template's path parameters, in order.
    let pathParameters: [String]

    init(_ methods: [String], _ template: String, scope: RouteScope, query: QueryRule, ledgers: LedgerUse = .search,
         immediate: PollingThreadAnswer? = nil, document: RouteDocument,
         handler: @escaping @Sendable (LedgerService, RouteMatch, inout [String: JSONValue]) async throws -> HTTPResponse) {
        self.methods = methods
        self.template = template
        self.scope = scope
        self.query = query
        self.ledgers = ledgers
        self.immediate = immediate
        self.handler = handler
        self.document = document
        self.segments = template.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { segment in
            segment.hasPrefix("{") && segment.hasSuffix("}") ? .parameter(String(segment.dropFirst().dropLast())) : .literal(String(segment))
        }
        self.pathParameters = segments.compactMap { if case .parameter(let name) = $0 { return name } else { return nil } }
    }

    /// Whether `method` may be used (`HEAD` wherever `GET` may).
    func allows(_ method: String) -> Bool {
        methods.contains(method) || (method == "HEAD" && methods.contains("GET"))
    }

    /// The 405 for a method it does not answer, with `Allow`.
    func methodNotAllowed(_ method: String) -> APIError {
        APIError(status: 405, code: "method_not_allowed",
                 message: "\(method) is not allowed on \(template); use \(methods.joined(separator: ", "))",
                 headers: [("Allow", methods.joined(separator: ", "))])
    }

    /// The values of the path parameters, in template order, if `path` (split after its leading
    /// `/`, empty segments kept: `/v1//x` does not match `/v1/x`) matches.
    func match(_ path: [Substring]) -> [String]? {
        guard path.count == segments.count else { return nil }
        var values: [String] = []
        for (segment, part) in zip(segments, path) {
            switch segment {
            case .literal(let literal): guard part == literal else { return nil }
            case .parameter: guard !part.isEmpty else { return nil }; values.append(String(part))
            }
        }
        return values
    }
}

/// A request matched to its route, with the values of the route's path parameters.
struct RouteMatch: Sendable {
    let route: ServiceRoute
    let request: HTTPRequest
    /// The path parameters' values, in the template's order.
    let values: [String]
    /// The token that authorized the request and the ledgers it opens (set by dispatch for a
    /// route with a scope).
    var grant: TokenGrant?

    /// The name of the token that authorized the request.
    var token: String? { grant?.name }

    /// The value of path parameter `name` (one of the template's).
    func path(_ name: String) -> String {
        values[route.pathParameters.firstIndex(of: name)!]
    }
}

/// The routes of a listener, in one table.
struct RouteTable: Sendable {
    let routes: [ServiceRoute]

    /// The route `request`'s path names, and its path parameters, if any.
    func match(_ request: HTTPRequest) -> RouteMatch? {
        let path = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        let parts = Array(path)
        for route in routes {
            if let values = route.match(parts) { return RouteMatch(route: route, request: request, values: values) }
        }
        return nil
    }

    /// The template of the route `path` names (whatever the method), else `unmatched`: the
    /// metric label of a request refused before dispatch (a body over the limit).
    func label(path: String) -> String {
        match(HTTPRequest(method: "GET", path: path))?.route.template ?? "unmatched"
    }

    /// The route with `template`, if declared.
    func route(_ template: String) -> ServiceRoute? { routes.first { $0.template == template } }
}
