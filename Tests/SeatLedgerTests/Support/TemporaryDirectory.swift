import EventStore
import Foundation
import LedgerStorage

/// A fresh directory under the system temporary directory, removed (with its contents) when the
/// object is deallocated. Keep a reference for as long as the files are needed.
///
/// ```swift
/// let dir = try TemporaryDirectory()
/// let db = dir.path("ledger.sqlite")
/// ```
final class TemporaryDirectory: Sendable {
    /// The directory.
    let url: URL

    /// Creates `…/seatledger-tests-<label>-<uuid>/`.
    init(label: String = "tmp") throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("seatledger-tests-\(label)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// The URL of `name` inside the directory (not created).
    func url(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// The path of `name` inside the directory (not created).
    func path(_ name: String) -> String { url(name).path }

    /// A new SQLite store `name` in the directory, for the test bundle id, no trust roots (for
    /// appending unsigned events directly).
    func bareStore(_ name: String) throws -> EventStore {
        try EventStore.create(at: path(name), configuration: LedgerConfiguration(bundleId: "com.example.reps", environment: .sandbox,
                                                                                  appAppleId: nil), roots: [])
    }

    /// Writes `data` to `name` (intermediate directories created) and returns its URL.
    @discardableResult
    func write(_ data: Data, to name: String) throws -> URL {
        let file = url(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: file)
        return file
    }

    /// Writes UTF-8 `text` to `name` and returns its URL.
    @discardableResult
    func write(_ text: String, to name: String) throws -> URL {
        try write(Data(text.utf8), to: name)
    }

    /// Writes `lines` as NDJSON (each followed by `\n`) to `name` and returns its URL.
    @discardableResult
    func writeLines(_ lines: [String], to name: String) throws -> URL {
        try write(lines.map { $0 + "\n" }.joined(), to: name)
    }

    /// Names of the entries of subdirectory `name` (`""` for the directory itself), sorted.
    func contents(of name: String = "") throws -> [String] {
        let target = name.isEmpty ? url : url(name)
        return try FileManager.default.contentsOfDirectory(atPath: target.path).sorted()
    }
}
