import Foundation
import LedgerEvents
import LedgerIntake
import Testing

/// `RejectionCode.catalogue` is the one list of rejection codes: the docs' table and the
/// `quarantine` help come from it, and the code gives no other.
@Suite("rejection codes: one list")
struct RejectionCodeCatalogueTests {
    @Test("Events/README.md's rejection table lists exactly the catalogue's codes, in its order")
    func readmeTable() throws {
        let readme = try String(contentsOf: TestPaths.repoRoot.appendingPathComponent("Events/README.md"), encoding: .utf8)
        let section = try #require(readme.range(of: "## Verification and rejection codes"))
        let rest = readme[section.upperBound...]
        let table = rest[..<(rest.range(of: "\n### ")?.lowerBound ?? rest.endIndex)]
        let codes = table.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("| `"), let end = line.dropFirst(3).firstIndex(of: "`") else { return nil }
            return String(line[line.index(line.startIndex, offsetBy: 3)..<end])
        }
        #expect(codes == RejectionCode.catalogue.map(\.code.rawValue))
        #expect(Set(codes).count == codes.count)
    }

    @Test("quarantine --help lists every code of the catalogue")
    func help() throws {
        let help = try CLI.run(["quarantine", "--help"])
        let text = help.stdout.replacingOccurrences(of: "\n", with: " ")
        for entry in RejectionCode.catalogue { #expect(text.contains(entry.code.rawValue), "\(entry.code)") }
    }

    @Test("every code the sources give is in the catalogue")
    func sourcesGiveOnlyCataloguedCodes() throws {
        let sources = TestPaths.repoRoot.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL }
            .filter { $0.pathExtension == "swift" } ?? []
        var given = Set<String>()
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            // A code named as a member (`code: .badSignature`) must be one of the catalogue's.
            for match in text.matches(of: /(?:IngestRejection\(|Self\()code: \.([A-Za-z0-9]+)/) { given.insert(String(match.1)) }
        }
        #expect(!given.isEmpty)
        let members = Set(RejectionCode.catalogue.map { entry in Self.memberName(entry.code.rawValue) })
        for name in given { #expect(members.contains(name), "code .\(name) is not in RejectionCode.catalogue") }
    }

    /// The static member's name of a code (`bad_signature` → `badSignature`, with the acronyms the type uses).
    static func memberName(_ code: String) -> String {
        let parts = code.split(separator: "_").map(String.init)
        var name = parts[0] + parts.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        for (from, to) in [("Jws", "JWS"), ("Json", "JSON"), ("Uuid", "UUID"), ("Oid", "OID"), ("Es256", "ES256"), ("X5c", "X5C"),
                           ("Api", "API"), ("Storekit", "StoreKit"), ("storekit", "storeKit")] {
            name = name.replacingOccurrences(of: from, with: to)
        }
        return name
    }
}
