import AppStoreModels
import Foundation

/// Signature-independent view of a stream, for drift checks.
///
/// ECDSA signatures are randomized, so two runs never produce the same bytes; their decoded
/// content must be identical. Every JWS string (compact form whose header is a JSON object) is
/// replaced by `{"$jws": {"header": …, "payload": …}}`, recursively; signatures are left out.
public enum SemanticView {
    /// The decoded form of one NDJSON line.
    public static func normalize(line: String) throws -> JSONValue {
        do {
            return normalize(try JSONValue.parse(line))
        } catch {
            throw SimulatorError("not a JSON line: \(error)")
        }
    }

    /// Replaces every JWS string in `value` with its decoded header and payload.
    public static func normalize(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string(let s):
            return decodeJWS(s) ?? value
        case .array(let items):
            return .array(items.map(normalize))
        case .object(let members):
            return .object(members.mapValues(normalize))
        default:
            return value
        }
    }

    /// The decoded content of a whole NDJSON text, one value per line.
    public static func normalize(ndjson: String) throws -> [JSONValue] {
        try ndjson.split(separator: "\n", omittingEmptySubsequences: true).map { try normalize(line: String($0)) }
    }

    private static func decodeJWS(_ s: String) -> JSONValue? {
        guard s.hasPrefix("eyJ") else { return nil }
        let parts = s.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Base64URL.decode(parts[0]), let payload = Base64URL.decode(parts[1]),
              let h = try? JSONValue.parse(header), h.objectValue != nil, let p = try? JSONValue.parse(payload) else { return nil }
        return .object(["$jws": .object(["header": h, "payload": normalize(p)])])
    }
}

/// What `--regenerate` / `--check` found for the committed scenario files.
public struct RegenerationReport: Sendable {
    /// Files written (missing, or their content changed).
    public var written: [String] = []
    /// Files whose content already matched (left byte-for-byte untouched).
    public var unchanged: [String] = []
    /// Files that differ from what the simulator produces (check mode), with the first difference.
    public var drifted: [(file: String, detail: String)] = []
    /// Files in the directory that belong to no built-in lifecycle.
    public var stale: [String] = []
}

/// Keeps `Events/scenarios/<name>.ndjson` and `<name>.expected.json` in step with the built-ins.
public enum ScenarioFiles {

    /// Compares (and in write mode rewrites) every built-in's files in `directory`.
    ///
    /// Each built-in runs with ``BuiltInLifecycles/options(for:seed:)`` (seed 0, its own identifier
    /// block, real time). A `.ndjson` file is compared by decoded content (``SemanticView``), so re-signing never
    /// rewrites an unchanged stream; an `.expected.json` file is compared byte for byte.
    public static func sync(directory: URL, simulator: GroupSimulator, write: Bool,
                            scenarios: [Scenario] = BuiltInLifecycles.all) throws -> RegenerationReport {
        var report = RegenerationReport()
        if write { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) }
        var expectedNames: Set<String> = []
        for scenario in scenarios {
            let run = try simulator.run(scenario, options: BuiltInLifecycles.options(for: scenario))
            let streamName = scenario.name + ".ndjson", expectName = scenario.name + ".expected.json"
            expectedNames.formUnion([streamName, expectName])
            let streamURL = directory.appendingPathComponent(streamName)
            let existingStream = try? String(contentsOf: streamURL, encoding: .utf8)
            if let detail = streamDifference(existing: existingStream, fresh: run.ndjson) {
                if write {
                    try Data(run.ndjson.utf8).write(to: streamURL)
                    report.written.append(streamName)
                } else {
                    report.drifted.append((streamName, detail))
                }
            } else {
                report.unchanged.append(streamName)
            }
            let expectURL = directory.appendingPathComponent(expectName)
            let existingExpect = try? String(contentsOf: expectURL, encoding: .utf8)
            if existingExpect != run.expectedJSON {
                if write {
                    try Data(run.expectedJSON.utf8).write(to: expectURL)
                    report.written.append(expectName)
                } else {
                    report.drifted.append((expectName, existingExpect == nil ? "missing" : "content differs"))
                }
            } else {
                report.unchanged.append(expectName)
            }
        }
        let present = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        report.stale = present.filter { ($0.hasSuffix(".ndjson") || $0.hasSuffix(".expected.json")) && !expectedNames.contains($0) }.sorted()
        return report
    }

    /// `nil` when both streams decode to the same content line by line, else where they first differ.
    public static func streamDifference(existing: String?, fresh: String) -> String? {
        guard let existing else { return "missing" }
        let old: [JSONValue], new: [JSONValue]
        do {
            old = try SemanticView.normalize(ndjson: existing)
            new = try SemanticView.normalize(ndjson: fresh)
        } catch {
            return "unreadable: \(error)"
        }
        if old.count != new.count { return "\(old.count) lines committed, \(new.count) generated" }
        for (i, (a, b)) in zip(old, new).enumerated() where a != b {
            return "line \(i + 1) differs in decoded content"
        }
        return nil
    }
}
