import Foundation
import Testing

/// An embedder of the core `SeatLedger` product links SQLite and OpenSSL, never libpq, hiredis or
/// an HTTP server library: a consumer package built from the README's embedding example proves it.
@Suite("Packaging: what an embedder of the core product links")
struct CoreProductLinkageTests {
    /// The repository this test belongs to (Tests/PackagingTests/ is two levels down).
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The first ```swift block under the README's "## Embedding the library" heading.
    static func readmeEmbeddingExample() throws -> String {
        let readme = try String(contentsOf: repository.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.range(of: "## Embedding the library"), "README has no embedding section")
        let rest = readme[section.upperBound...]
        let open = try #require(rest.range(of: "```swift\n"), "the embedding section has no swift block")
        let close = try #require(rest[open.upperBound...].range(of: "\n```"), "unterminated swift block")
        return String(rest[open.upperBound..<close.lowerBound])
    }

    @Test("the README's embedding example builds against the core product alone and links neither libpq, hiredis nor libmicrohttpd")
    func coreProductLinksOnlyWhatItUses() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("seatledger-consumer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work.appendingPathComponent("Sources/Consumer"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        // A path dependency's identity is its folder's name, whatever the clone is called.
        let identity = Self.repository.lastPathComponent
        let manifest = """
        // swift-tools-version:6.0
        import PackageDescription
        let package = Package(
            name: "Consumer",
            dependencies: [.package(path: "\(Self.repository.path)")],
            targets: [.executableTarget(name: "Consumer", dependencies: [.product(name: "SeatLedger", package: "\(identity)")])],
            swiftLanguageModes: [.v6])
        """
        try manifest.write(to: work.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        try Self.readmeEmbeddingExample().write(to: work.appendingPathComponent("Sources/Consumer/main.swift"),
                                                atomically: true, encoding: .utf8)

        let build = try Self.run(["swift", "build", "--package-path", work.path, "--scratch-path", work.appendingPathComponent(".build").path])
        #expect(build.status == 0, "the consumer did not build:\n\(build.output)")
        guard build.status == 0 else { return }
        let binPath = try Self.run(["swift", "build", "--package-path", work.path, "--scratch-path",
                                    work.appendingPathComponent(".build").path, "--show-bin-path"])
        let binary = binPath.output.trimmingCharacters(in: .whitespacesAndNewlines) + "/Consumer"
        let ldd = try Self.run(["ldd", binary])
        #expect(ldd.status == 0, "\(ldd.output)")
        let libraries = ldd.output.split(separator: "\n").compactMap { $0.split(whereSeparator: \.isWhitespace).first.map(String.init) }
        // ldd really lists the libraries the core uses, so the absences below are meaningful.
        #expect(libraries.contains { $0.hasPrefix("libsqlite3.so") }, "\(ldd.output)")
        #expect(libraries.contains { $0.hasPrefix("libcrypto.so") }, "\(ldd.output)")
        for unwanted in ["libpq.so", "libhiredis.so", "libmicrohttpd.so"] {
            #expect(!libraries.contains { $0.hasPrefix(unwanted) }, "the core product links \(unwanted):\n\(ldd.output)")
        }
    }

    @Test("the storage contract depends on no engine, and each engine's store only on its own C library",
          arguments: [ModuleRule(module: "LedgerStorage", required: [], forbidden: ["CSQLite", "CLibPQ", "EventStore"]),
                      ModuleRule(module: "EventStore", required: ["CSQLite", "LedgerStorage"], forbidden: ["CLibPQ", "PostgresClient"]),
                      ModuleRule(module: "PostgresStore", required: ["CLibPQ", "LedgerStorage"], forbidden: ["CSQLite", "EventStore"])])
    func storageModulesDependOnlyOnTheirEngine(_ rule: ModuleRule) throws {
        let (module, required, forbidden) = (rule.module, rule.required, rule.forbidden)
        // A scratch path of its own: the running `swift test` holds the lock on the package's `.build`.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("seatledger-describe-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let described = try Self.run(["swift", "package", "--package-path", Self.repository.path, "--scratch-path", scratch.path,
                                      "describe", "--type", "json"])
        #expect(described.status == 0, "\(described.output)")
        // `describe` may print build-system notes before the JSON.
        let json = try #require(described.output.firstIndex(of: "{").map { described.output[$0...] })
        struct Description: Decodable {
            struct Target: Decodable {
                let name: String
                let target_dependencies: [String]?
            }
            let targets: [Target]
        }
        let targets = try JSONDecoder().decode(Description.self, from: Data(json.utf8)).targets
        let direct = Dictionary(targets.map { ($0.name, Set($0.target_dependencies ?? [])) }, uniquingKeysWith: { first, _ in first })
        #expect(direct[module] != nil, "no target \(module)")
        var reached = Set<String>(), frontier = [module]
        while let next = frontier.popLast() {
            for dependency in direct[next] ?? [] where reached.insert(dependency).inserted { frontier.append(dependency) }
        }
        #expect(required.isSubset(of: reached), "\(module) reaches \(reached.sorted())")
        #expect(reached.isDisjoint(with: forbidden), "\(module) depends on \(reached.intersection(forbidden).sorted())")
    }

    /// A module, the targets it must reach and those it must not.
    struct ModuleRule: Sendable, CustomTestStringConvertible {
        let module: String
        let required: Set<String>
        let forbidden: Set<String>
        var testDescription: String { module }
    }

    /// Runs `arguments` (looked up on PATH) and returns its exit status and combined output.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}
