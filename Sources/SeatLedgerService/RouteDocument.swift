import AppStoreModels

/// What the OpenAPI document says of one route (``ServiceRoute/document``): the generator
/// (``OpenAPIDocument``) adds the methods, the path template, the token, the query parameters,
/// the 400 of the query check and the 401/403 of the token from the route itself.
struct RouteDocument: Sendable {
    let summary: String
    let description: String
    /// A description of each path parameter of the template, by name.
    let pathParameters: [String: String]
    /// The request body, if the route reads one.
    let requestBody: RequestBodyDocument?
    let responses: [ResponseDocument]

    init(_ summary: String, _ description: String, pathParameters: [String: String] = [:], requestBody: RequestBodyDocument? = nil,
         responses: [ResponseDocument]) {
        self.summary = summary
        self.description = description
        self.pathParameters = pathParameters
        self.requestBody = requestBody
        self.responses = responses
    }
}

/// A request body: its description, whether it is required, and its media types.
struct RequestBodyDocument: Sendable {
    let description: String
    let required: Bool
    let media: [MediaDocument]
}

/// One response status of a route.
struct ResponseDocument: Sendable {
    let status: Int
    let description: String
    let media: [MediaDocument]
    /// Header names the response carries (`Allow`, `Retry-After`, `WWW-Authenticate`).
    let headers: [String]

    /// A JSON response whose body is `schema`, with examples captured from a real run.
    static func json(_ status: Int, _ description: String, schema: String, examples: [String: JSONValue] = [:],
                     headers: [String] = []) -> ResponseDocument {
        ResponseDocument(status: status, description: description,
                         media: [MediaDocument(type: "application/json", schema: .reference(schema), examples: examples)], headers: headers)
    }

    /// An error answer (``APIError``'s body) with its possible codes.
    static func error(_ status: Int, _ description: String, codes: [String], examples: [String: JSONValue] = [:],
                      headers: [String] = []) -> ResponseDocument {
        let codeList = codes.map { "`\($0)`" }.joined(separator: ", ")
        return json(status, "\(description) (`error`: \(codeList))", schema: "Error", examples: examples, headers: headers)
    }
}

/// A media type with its schema and named examples.
struct MediaDocument: Sendable {
    let type: String
    let schema: JSONValue
    let examples: [String: JSONValue]

    init(type: String, schema: JSONValue, examples: [String: JSONValue] = [:]) {
        self.type = type
        self.schema = schema
        self.examples = examples
    }
}

extension JSONValue {
    /// `{"$ref": "#/components/schemas/<name>"}`.
    static func reference(_ name: String) -> JSONValue { ["$ref": .string("#/components/schemas/\(name)")] }
}
