import AppStoreModels

/// The OpenAPI 3.1 document of `seatledger serve`, generated from ``RouteTable/service``: served at
/// `GET /openapi.json` and committed as `Events/api/openapi.json` (a test regenerates it and fails
/// when the file differs).
///
/// The table gives each path and method, its path parameters, its query parameters (a parameter
/// that may be given more than once is an array, `form`, exploded), its token (a `security`
/// requirement, with the 401 and 403 it answers) and the 400 of its query check; the route's
/// ``RouteDocument`` gives the rest. Schemas are in ``APISchemas``, examples (captured from a
/// real `serve` on the demo ledger) in ``APIExamples``.
enum OpenAPIDocument {
    /// The document as served: pretty-printed (sorted keys), one trailing newline.
    static let text: String = generate(RouteTable.service).prettyString() + "\n"

    /// The document for the routes of `table`.
    static func generate(_ table: RouteTable) -> JSONValue {
        var paths: [String: JSONValue] = [:]
        for route in table.routes {
            var item: [String: JSONValue] = [:]
            for method in route.methods { item[method.lowercased()] = operation(route, method: method) }
            paths[route.template] = .object(item)
        }
        return [
            "openapi": "3.1.0",
            "info": [
                "title": "SeatLedger service (seatledger serve)",
                "version": "1",
                "summary": "App Store Server Notifications in, multiseat group and member state out.",
                "description": .string("Every route of `seatledger serve`'s API listener, generated from its route table. JSON bodies are byte for byte what "
                    + "the CLI's `--json` prints for the same ledger and clocks. Errors are `{\"error\": code, \"message\": reason, …}`. A route "
                    + "answers 405 with `Allow` to another method, and `/v1` routes answer 400 `bad_parameter` to a query parameter they do not take."),
            ],
            "paths": .object(paths),
            "webhooks": webhooks,
            "components": [
                "schemas": APISchemas.all,
                "securitySchemes": securitySchemes(table),
            ],
        ]
    }

    /// What `serve` POSTs to the endpoints `seatledger webhook add` registers (Standard Webhooks;
    /// `Events/api/webhooks.md`).
    static var webhooks: JSONValue {
        let headers: [JSONValue] = [
            ["name": "webhook-id", "in": "header", "required": true, "schema": ["type": "string", "minLength": 1, "maxLength": 256],
             "description": "The message id: the transition id (`access.changed`) or `ev_<notificationUUID>` (`apple.notification`). The same on every retry: de-duplicate by it."],
            ["name": "webhook-timestamp", "in": "header", "required": true, "schema": ["type": "string", "pattern": "^[0-9]+$"],
             "description": "Unix seconds when this attempt was signed."],
            ["name": "webhook-signature", "in": "header", "required": true, "schema": ["type": "string"],
             "description": "`v1,<base64 HMAC-SHA256 of id.timestamp.body>`, space-separated when two secrets sign (a rotation's grace period)."],
        ]
        func message(_ summary: String, _ description: String, schema: String) -> JSONValue {
            ["post": ["summary": .string(summary), "description": .string(description), "parameters": .array(headers),
                      "requestBody": ["required": true, "content": ["application/json": ["schema": ["$ref": .string("#/components/schemas/\(schema)")]]]],
                      "responses": ["2XX": ["description": "Delivered: any 2xx ends the delivery"],
                                    "default": ["description": "Anything else (or no answer in 10 s, or a redirect) is retried with backoff for 73 hours"]]]]
        }
        return [
            "accessChanged": message("An access transition (type `access.changed`)",
                                     "One change of a subject's entitlement, as `GET /v1/access-changes` lists it. Fold `data.after` by key in `sequence` order.",
                                     schema: "AccessChangedMessage"),
            "appleNotification": message("Apple's notification, forwarded (type `apple.notification`)",
                                         "The body Apple POSTed to the ledger, byte for byte: `{\"signedPayload\": …}`.", schema: "AppleNotificationBody"),
        ]
    }

    /// A bearer scheme `<scope>Token` for each scope a route of `table` needs.
    static func securitySchemes(_ table: RouteTable) -> JSONValue {
        let scopes = RouteScope.allCases.filter { scope in scope != .none && table.routes.contains { $0.scope == scope } }
        return .object(Dictionary(uniqueKeysWithValues: scopes.map { scope in
            ("\(scope.rawValue)Token", ["type": "http", "scheme": "bearer",
                                        "description": .string("A token whose scopes include `\(scope.rawValue)`, which opens \(scope.opens) "
                                            + "(`seatledger token add NAME --scope \(scope.rawValue)`; a token may carry several scopes).")] as JSONValue)
        }))
    }

    /// The operation object of `route` for `method`.
    static func operation(_ route: ServiceRoute, method: String) -> JSONValue {
        let document = route.document
        var parameters: [JSONValue] = route.pathParameters.map { name in
            ["name": .string(name), "in": "path", "required": true, "description": .string(document.pathParameters[name] ?? ""),
             "schema": ["type": "string", "minLength": 1]]
        }
        for parameter in route.query.parameters {
            var object: [String: JSONValue] = ["name": .string(parameter.name), "in": "query", "required": false,
                                               "description": .string(parameter.description)]
            if parameter.times > 1 {
                object["schema"] = ["type": "array", "items": parameter.schema, "maxItems": .int(Int64(parameter.times))]
                object["style"] = "form"
                object["explode"] = true
            } else {
                object["schema"] = parameter.schema
            }
            parameters.append(.object(object))
        }
        var responses: [Int: ResponseDocument] = [:]
        func add(_ response: ResponseDocument) {
            guard let existing = responses[response.status] else { responses[response.status] = response; return }
            responses[response.status] = ResponseDocument(
                status: response.status, description: existing.description + "; or " + response.description,
                media: existing.media.map { media in
                    MediaDocument(type: media.type, schema: media.schema,
                                  examples: media.examples.merging(response.media.first { $0.type == media.type }?.examples ?? [:]) { first, _ in first })
                },
                headers: existing.headers + response.headers.filter { !existing.headers.contains($0) })
        }
        document.responses.forEach(add)
        if case .only = route.query {
            add(.error(400, "A query parameter the route does not take, one given too often, or a value it cannot read", codes: ["bad_parameter"],
                       examples: ["unknown parameter": APIExamples.unknownParameter, "epoch seconds": APIExamples.epochSeconds]))
        }
        if route.scope != .none {
            add(.error(401, "No bearer token, or one unknown or revoked", codes: ["unauthorized"],
                       examples: ["no token": APIExamples.unauthorized], headers: ["WWW-Authenticate"]))
            add(.error(403, "None of the token's scopes is `\(route.scope.rawValue)`, or the token does not open the ledger `ledger` names",
                       codes: ["forbidden"], examples: route.scope == .seats ? ["read token": APIExamples.forbidden] : [:]))
            add(.error(404, "`ledger` names no ledger of the deployment", codes: ["unknown_ledger"]))
            switch route.ledgers {
            case .one:
                add(.error(400, "The token opens several ledgers and `ledger` names none (the body names `ledgers`)", codes: ["ledger_required"]))
            case .search:
                add(.error(409, "Several ledgers know the reference and `ledger` names none (the body names `ledgers`)", codes: ["ambiguous_reference"]))
            case .merged:
                break
            }
        }
        var operation: [String: JSONValue] = [
            "operationId": .string(operationId(route, method: method)),
            "summary": .string(document.summary),
            "description": .string(document.description),
            "security": route.scope == .none ? [] : .array([.object(["\(route.scope.rawValue)Token": .array([])])]),
            "responses": .object(Dictionary(uniqueKeysWithValues: responses.values.map { (String($0.status), response($0)) })),
        ]
        if !parameters.isEmpty { operation["parameters"] = .array(parameters) }
        if let body = document.requestBody {
            operation["requestBody"] = ["description": .string(body.description), "required": .bool(body.required),
                                        "content": content(body.media)]
        }
        return .object(operation)
    }

    private static func response(_ response: ResponseDocument) -> JSONValue {
        var object: [String: JSONValue] = ["description": .string(response.description)]
        if !response.media.isEmpty { object["content"] = content(response.media) }
        if !response.headers.isEmpty {
            object["headers"] = .object(Dictionary(uniqueKeysWithValues: response.headers.map { name in
                (name, ["schema": ["type": "string"], "description": .string(headerDescriptions[name] ?? name)] as JSONValue)
            }))
        }
        return .object(object)
    }

    private static let headerDescriptions = [
        "Allow": "The methods the route answers.",
        "Cache-Control": "`private, max-age=N` while entitled (never past the earliest end of an entitled source, at most 60 s); `no-cache` otherwise.",
        "ETag": "A digest of the answer without its `asOf`: it changes when the answer does.",
        "Retry-After": "Seconds to wait before retrying.",
        "WWW-Authenticate": "`Bearer`.",
    ]

    private static func content(_ media: [MediaDocument]) -> JSONValue {
        .object(Dictionary(uniqueKeysWithValues: media.map { media in
            var object: [String: JSONValue] = ["schema": media.schema]
            if !media.examples.isEmpty {
                object["examples"] = .object(media.examples.mapValues { ["value": $0] })
            }
            return (media.type, .object(object))
        }))
    }

    /// `getV1GroupsByRefReplay` for `GET /v1/groups/{ref}/replay`.
    static func operationId(_ route: ServiceRoute, method: String) -> String {
        let words = route.segments.map { segment -> String in
            switch segment {
            case .literal(let literal):
                return literal.split { !$0.isLetter && !$0.isNumber }.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
            case .parameter(let name):
                return "By" + name.prefix(1).uppercased() + name.dropFirst()
            }
        }
        return method.lowercased() + words.joined()
    }
}
