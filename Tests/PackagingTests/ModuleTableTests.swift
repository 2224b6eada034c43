import Foundation
import Testing

/// ARCHITECTURE.md's module table says what each module depends on; `Package.swift` decides it.
/// This keeps the two the same, so the one-page read stays true to the build.
@Suite("ARCHITECTURE.md's module table matches Package.swift")
struct ModuleTableTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Each `.target` / `.executableTarget` of the manifest and its dependencies (names only).
    static func manifestTargets() throws -> [String: Set<String>] {
        let manifest = try String(contentsOf: repository.appendingPathComponent("Package.swift"), encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: #"\.(?:target|executableTarget)\(name: "([^"]+)"(?:, dependencies: \[([^\]]*)\])?"#)
        var targets: [String: Set<String>] = [:]
        let range = NSRange(manifest.startIndex..., in: manifest)
        for match in pattern.matches(in: manifest, range: range) {
            let name = String(manifest[Range(match.range(at: 1), in: manifest)!])
            let list = Range(match.range(at: 2), in: manifest).map { String(manifest[$0]) } ?? ""
            targets[name] = Set(list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
                .filter { !$0.isEmpty })
        }
        return targets
    }

    /// The names of the manifest's system library targets (`CSQLite`, …).
    static func systemLibraries() throws -> Set<String> {
        let manifest = try String(contentsOf: repository.appendingPathComponent("Package.swift"), encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: #"\.systemLibrary\(name: "([^"]+)""#)
        return Set(pattern.matches(in: manifest, range: NSRange(manifest.startIndex..., in: manifest)).map {
            String(manifest[Range($0.range(at: 1), in: manifest)!])
        })
    }

    /// The table's rows: the modules a row names (in backticks) and the names in its last column.
    static func tableRows() throws -> [(modules: [String], dependsOn: Set<String>)] {
        let text = try String(contentsOf: repository.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
        let section = try #require(text.components(separatedBy: "## Modules").dropFirst().first?.components(separatedBy: "\n## ").first)
        return section.split(separator: "\n").filter { $0.hasPrefix("| `") }.map { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            let modules = cells[1].components(separatedBy: "`").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
                .filter { !$0.contains("/") }  // `Tools/seatledger-sim` names a folder, not a module
            // Words in the last column, without parenthesised notes: "JWSVerification (SHA-256)".
            let last = cells[cells.count - 2].replacingOccurrences(of: #"\([^)]*\)"#, with: "", options: .regularExpression)
            let names = Set(last.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            return (modules, names)
        }
    }

    @Test("every target of Package.swift (but the test and bench ones) has a row, and each row lists exactly its target's dependencies")
    func tableMatchesManifest() throws {
        let targets = try Self.manifestTargets()
        let known = Set(targets.keys).union(try Self.systemLibraries())
        let rows = try Self.tableRows()
        let named = Set(rows.flatMap(\.modules))
        let tooling: Set<String> = ["sample-embedder", "seatledger-sim", "seatledger-bench", "PostgresTestSupport", "LedgerStoreConformance", "HTTPTestSupport", "ProjectionTestSupport"]
        #expect(Set(targets.keys).subtracting(tooling).subtracting(named).isEmpty,
                "modules without a row: \(Set(targets.keys).subtracting(tooling).subtracting(named).sorted())")
        for row in rows {
            // A row may name a system library beside its module (`CLibPQ`, `PostgresClient`):
            // the Swift target of the row is the one the manifest declares with `.target`.
            let declared = row.modules.filter { targets[$0] != nil }
            #expect(!declared.isEmpty || row.modules.allSatisfy { $0.hasPrefix("C") }, "row \(row.modules): no such target")
            guard let module = declared.last, let dependencies = targets[module] else { continue }
            // The row's own system library (`CMicroHTTPD` for `HTTPServer`) goes without saying.
            let expected = dependencies.subtracting(row.modules)
            let listed = row.dependsOn.filter { known.contains($0) }
            #expect(listed == expected, "\(module): the table says \(listed.sorted()), Package.swift \(expected.sorted())")
        }
    }
}
