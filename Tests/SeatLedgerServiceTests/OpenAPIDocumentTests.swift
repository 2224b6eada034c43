import AppStoreModels
import Foundation
import HTTPServer
import LedgerStorage
import SeatLedger
@testable import SeatLedgerService
import Testing

/// `Events/api/openapi.json`: generated from the route table, served at `GET /openapi.json`, and
/// agreeing with the table route by route.
///
/// When the table or a route's document changes on purpose, run this suite with
/// `SEATLEDGER_UPDATE_GOLDEN=1` (refused under `CI`) and review the diff of the committed file.
@Suite("OpenAPI document: generated from the route table, committed, served, in agreement")
struct OpenAPIDocumentTests {
    static let committed = Repository.root.appendingPathComponent("Events/api/openapi.json")

    /// Whether the committed document is being rewritten (never under `CI`, where the test could not fail).
    static func updating() throws -> Bool {
        let environment = ProcessInfo.processInfo.environment
        guard environment["SEATLEDGER_UPDATE_GOLDEN"] == "1" else { return false }
        if let ci = environment["CI"], !ci.isEmpty {
            throw FixtureError("SEATLEDGER_UPDATE_GOLDEN=1 with CI=\(ci): Events/api/openapi.json is never rewritten in CI; unset one of them")
        }
        return true
    }

    @Test("the committed Events/api/openapi.json is the document the table generates (SEATLEDGER_UPDATE_GOLDEN=1 rewrites it)")
    func committedIsGenerated() throws {
        if try Self.updating() {
            try Data(OpenAPIDocument.text.utf8).write(to: Self.committed)
            return
        }
        let text = try String(contentsOf: Self.committed, encoding: .utf8)
        #expect(text == OpenAPIDocument.text,
                "Events/api/openapi.json differs from the document the route table generates; rerun with SEATLEDGER_UPDATE_GOLDEN=1 (outside CI) and review the diff")
    }

    @Test("every route of the table is in the committed document with its methods, path and query parameters and token, and nothing else is")
    func tableAndDocumentAgree() throws {
        let document = try JSONValue.parse(bytes: Array(try Data(contentsOf: Self.committed)))
        try Self.agree(RouteTable.service, document)
    }

    @Test("the agreement check fails on a document that lost a route, a method, a parameter or a token, or has one too many")
    func agreementCheckCanFail() throws {
        let document = OpenAPIDocument.generate(RouteTable.service)
        try Self.agree(RouteTable.service, document)
        guard case .object(var root) = document, case .object(let paths)? = root["paths"] else { Issue.record("no paths"); return }
        func mutated(_ change: (inout [String: JSONValue]) -> Void) -> JSONValue {
            var copy = paths
            change(&copy)
            root["paths"] = .object(copy)
            return .object(root)
        }
        func operation(_ path: String, _ method: String, _ change: @escaping (inout [String: JSONValue]) -> Void) -> (inout [String: JSONValue]) -> Void {
            { paths in
                guard case .object(var item)? = paths[path], case .object(var operation)? = item[method] else { return }
                change(&operation)
                item[method] = .object(operation)
                paths[path] = .object(item)
            }
        }
        let broken: [(String, JSONValue)] = [
            ("a route missing", mutated { $0["/v1/changes"] = nil }),
            ("a route too many", mutated { $0["/v1/extra"] = ["get": ["responses": [:]]] }),
            ("a method too many", mutated(operation("/v1/groups/{ref}", "get") { _ in }) .replacing(path: "/v1/groups/{ref}", extraMethod: "put")),
            ("a query parameter missing", mutated(operation("/v1/groups", "get") { operation in
                operation["parameters"] = .array((operation["parameters"]?.arrayValue ?? []).filter { $0["name"] != "cursor" })
            })),
            ("a query parameter's count", mutated(operation("/v1/groups/{ref}/diff", "get") { operation in
                operation["parameters"] = .array((operation["parameters"]?.arrayValue ?? []).map { parameter in
                    guard parameter["name"] == "knownAt", case .object(var object) = parameter else { return parameter }
                    object["schema"] = ["type": "string"]
                    return .object(object)
                })
            })),
            ("a token dropped", mutated(operation("/v1/members/{id}", "get") { $0["security"] = [] })),
        ]
        for (what, document) in broken {
            #expect(throws: FixtureError.self, "\(what)") { try Self.agree(RouteTable.service, document) }
        }
    }

    @Test("GET /openapi.json answers the generated document, no token; HEAD too; POST is a 405 with Allow")
    func served() async throws {
        let fixture = try LedgerFixture()
        let pool = try LedgerPool.open(path: fixture.path)
        let service = try LedgerService(pool: pool, configuration: .init(http: .init(port: 0), ledgerDescription: fixture.path),
                                        log: RequestLog { _ in })
        let get = await service.handle(HTTPRequest(method: "GET", path: "/openapi.json"))
        #expect(get.status == 200)
        #expect(get.headers.contains { $0.name == "Content-Type" && $0.value == "application/json" })
        #expect(String(decoding: get.body, as: UTF8.self) == OpenAPIDocument.text)
        #expect(await service.handle(HTTPRequest(method: "HEAD", path: "/openapi.json")).status == 200)
        let post = await service.handle(HTTPRequest(method: "POST", path: "/openapi.json"))
        #expect(post.status == 405)
        #expect(post.headers.contains { $0.name == "Allow" && $0.value == "GET" })
        await service.shutdown(drainTimeout: .seconds(1))
    }

    @Test("the component schemas taken from Events/schemas are those files' definitions, their $refs pointed into the document")
    func schemasFollowEventSchemas() throws {
        let schemas = try #require(APISchemas.all.objectValue)
        let directory = Repository.root.appendingPathComponent("Events/schemas")
        func load(_ name: String) throws -> [String: JSONValue] {
            try #require(try JSONValue.parse(bytes: Array(try Data(contentsOf: directory.appendingPathComponent(name)))).objectValue)
        }
        func component(_ definition: String) -> String { definition == "diff" ? "GroupDiff" : definition.prefix(1).uppercased() + definition.dropFirst() }
        func rewritten(_ value: JSONValue) -> JSONValue {
            switch value {
            case .object(let members):
                return .object(Dictionary(uniqueKeysWithValues: members.map { key, member in
                    guard key == "$ref", let reference = member.stringValue else { return (key, rewritten(member)) }
                    let target = reference == "group-state.schema.json" ? "GroupState" : component(String(reference.split(separator: "/").last ?? ""))
                    return (key, .string("#/components/schemas/\(target)"))
                }))
            case .array(let items): return .array(items.map(rewritten))
            default: return value
            }
        }
        let groupState = try load("group-state.schema.json")
        var expected: [String: JSONValue] = ["GroupState": rewritten(.object(groupState.filter { !["$schema", "$id", "$defs"].contains($0.key) }))]
        for source in [groupState, try load("reports.schema.json")] {
            for (name, definition) in source["$defs"]?.objectValue ?? [:] { expected[component(name)] = rewritten(definition) }
        }
        for (name, schema) in expected { #expect(schemas[name] == schema, "component \(name)") }
        #expect(expected.count >= 19)
    }

    @Test("every example in the document is a real answer: none is missing or null")
    func examplesCaptured() throws {
        var found = 0
        func walk(_ value: JSONValue, _ path: String) {
            switch value {
            case .object(let members):
                if let examples = members["examples"]?.objectValue, path.contains("/content/") || path.contains("content") {
                    for (name, example) in examples {
                        found += 1
                        #expect(example["value"] != nil && example["value"] != .null, "\(path) example \(name)")
                    }
                }
                for (key, member) in members { walk(member, path + "/" + key) }
            case .array(let items):
                for (index, item) in items.enumerated() { walk(item, path + "/\(index)") }
            default: break
            }
        }
        walk(OpenAPIDocument.generate(RouteTable.service)["paths"] ?? .null, "")
        #expect(found >= 20)
    }

    /// Fails (throws) unless `document`'s paths are exactly the table's routes, each with the
    /// route's methods, path parameters, query parameters (an array of at most `times` when given
    /// more than once) and token.
    static func agree(_ table: RouteTable, _ document: JSONValue) throws {
        let paths = document["paths"]?.objectValue ?? [:]
        let templates = Set(table.routes.map(\.template))
        guard Set(paths.keys) == templates else {
            throw FixtureError("document paths \(paths.keys.sorted()) are not the table's \(templates.sorted())")
        }
        for route in table.routes {
            let item = paths[route.template]?.objectValue ?? [:]
            guard Set(item.keys) == Set(route.methods.map { $0.lowercased() }) else {
                throw FixtureError("\(route.template): document methods \(item.keys.sorted()), table \(route.methods)")
            }
            for method in route.methods {
                let operation = item[method.lowercased()] ?? .null
                let parameters = operation["parameters"]?.arrayValue ?? []
                let inPath = parameters.filter { $0["in"] == "path" }.compactMap { $0["name"]?.stringValue }
                guard inPath == route.pathParameters else {
                    throw FixtureError("\(method) \(route.template): document path parameters \(inPath), template \(route.pathParameters)")
                }
                let inQuery = parameters.filter { $0["in"] == "query" }
                let documented = inQuery.compactMap { parameter -> String? in
                    guard let name = parameter["name"]?.stringValue else { return nil }
                    let times = parameter["schema"]?["type"] == "array" ? parameter["schema"]?["maxItems"]?.int64Value ?? 0 : 1
                    return "\(name)×\(times)"
                }
                let declared = route.query.parameters.map { "\($0.name)×\($0.times)" }
                guard documented == declared else {
                    throw FixtureError("\(method) \(route.template): document query parameters \(documented), table \(declared)")
                }
                let security = operation["security"]?.arrayValue ?? []
                let schemes = security.flatMap { $0.objectValue?.keys.map { $0 } ?? [] }
                let expected = route.scope == .none ? [] : ["\(route.scope.rawValue)Token"]
                guard schemes == expected else {
                    throw FixtureError("\(method) \(route.template): document security \(schemes), table scope \(route.scope)")
                }
                let statuses = Set(operation["responses"]?.objectValue?.keys.map { $0 } ?? [])
                if route.scope != .none, !statuses.isSuperset(of: ["401", "403"]) {
                    throw FixtureError("\(method) \(route.template): no 401/403 for a route that needs a token")
                }
                if case .only = route.query, !statuses.contains("400") {
                    throw FixtureError("\(method) \(route.template): no 400 for a route that checks its query parameters")
                }
            }
        }
    }
}

private extension JSONValue {
    /// A copy whose path item at `path` also has an operation for `extraMethod`.
    func replacing(path: String, extraMethod: String) -> JSONValue {
        guard case .object(var root) = self, case .object(var paths)? = root["paths"], case .object(var item)? = paths[path] else { return self }
        item[extraMethod] = ["responses": [:]]
        paths[path] = .object(item)
        root["paths"] = .object(paths)
        return .object(root)
    }
}
