import DemoSamples
import Foundation
import Testing

/// `seatledger demo` carries its sample streams and trust root in the binary.
@Suite("Demo from an installed binary")
struct InstalledDemoTests {
    @Test("a copy of the binary alone, run from an empty directory, ingests every embedded sample line")
    func demoRunsFromACopiedBinary() throws {
        let directory = try TemporaryDirectory(label: "installed-demo")
        let installed = directory.url("bin/seatledger")
        try FileManager.default.createDirectory(at: directory.url("bin"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: try CLI.binary(), to: installed)
        let empty = directory.url("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)

        let process = Process()
        process.executableURL = installed
        process.arguments = ["demo", "--json"]
        process.currentDirectoryURL = empty
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)

        // Every line of the repository's sample streams, counted independently of the embedded copy.
        let scenarios = TestPaths.repoRoot.appendingPathComponent("Events/scenarios")
        let files = try FileManager.default.contentsOfDirectory(atPath: scenarios.path).filter { $0.hasSuffix(".ndjson") }
        let lines = try files.reduce(0) { count, name in
            count + (try String(contentsOf: scenarios.appendingPathComponent(name), encoding: .utf8))
                .split(separator: "\n").count
        }
        let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let ingested = try #require(report["ingested"] as? [String: Any])
        let accounted = ["appended", "duplicates", "quarantined"].compactMap { ingested[$0] as? Int }.reduce(0, +)
        #expect(accounted == lines, "the demo ingested \(accounted) lines; Events/scenarios has \(lines)")
        #expect(ingested["quarantined"] as? Int == 0, "the embedded test root verifies every sample")
        #expect(DemoSamples.streams.map(\.name) == files.sorted(), "the embedded streams are the repository's")
        #expect(((report["groups"] as? [Any])?.count ?? 0) > 0)
    }
}
