import Foundation
import LedgerStorage

/// A ledger file found damaged: refused for writing until it is restored.
public struct DamagedLedgerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The ledger file.
    public let path: String
    /// What was found (SQLite's `quick_check` lines, or the error a write met).
    public let problem: String
    /// The marker file that records it, when one was written.
    public let marker: String?

    /// The text a person reads (what the CLI prints for it).
    public var description: String {
        "refusing to write to \(path): the file is damaged (\(problem)). Restore it from a backup (or `seatledger copy` what "
            + "can still be read into a new ledger) and run `seatledger verify`"
            + (marker.map { "; then delete \($0), which records the damage" } ?? "")
    }
}

/// The damage record beside a SQLite ledger file (`<file>.damaged`) and the check at open.
///
/// Writing into a file SQLite reports corrupt could spread the damage and bury it under new
/// events, so a writer refuses it. A full `PRAGMA quick_check` reads the whole file, too slow
/// for every `ingest` of a large ledger, so:
/// - a writer opening a file of at most ``fullCheckLimitBytes`` runs `quick_check` first;
/// - `verify` (which always checks the whole file) and any write that meets `SQLITE_CORRUPT`
///   record the damage in `<file>.damaged`, and every writer refuses the file while that exists.
enum LedgerSoundness {
    /// Files up to this size are checked in full by every writer at open: 256 MiB keeps that
    /// check to a second or two (rates in `Tools/bench/PERFORMANCE.md`, History).
    static let fullCheckLimitBytes: Int64 = 256 << 20

    /// The damage marker of the SQLite file at `path`.
    static func markerPath(for path: String) -> String { path + ".damaged" }

    /// Throws ``DamagedLedgerError`` when `store` must not be written: a damage marker exists, or
    /// (small files) `quick_check` finds a problem, which is then recorded.
    static func requireSound(_ store: any LedgerStore) throws {
        guard let path = store.checkedFile else { return }  // PostgreSQL: the server guards its own pages
        let marker = markerPath(for: path)
        if let recorded = try? String(contentsOfFile: marker, encoding: .utf8) {
            throw DamagedLedgerError(path: path, problem: recorded.trimmingCharacters(in: .whitespacesAndNewlines), marker: marker)
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
        guard size <= fullCheckLimitBytes else { return }
        let problems: [String]
        do {
            problems = try store.integrityProblems()
        } catch where LedgerStoreError.isCorruption(error) {
            problems = ["\(error)"]
        }
        guard !problems.isEmpty else { return }
        let problem = problems.joined(separator: "; ")
        throw DamagedLedgerError(path: path, problem: problem, marker: record(problem, for: path))
    }

    /// Records damage found in the file at `path`; returns the marker's path, or `nil` when it could not be written.
    @discardableResult
    static func record(_ problem: String, for path: String) -> String? {
        let marker = markerPath(for: path)
        let text = "\(ISO8601DateFormatter().string(from: Date())) \(problem)\n"
        return (try? Data(text.utf8).write(to: URL(fileURLWithPath: marker), options: .atomic)) == nil ? nil : marker
    }

    /// Rethrows `error`, first recording the damage when it is SQLite's `SQLITE_CORRUPT` on a file ledger.
    static func noting(_ error: any Error, in store: any LedgerStore) -> any Error {
        guard LedgerStoreError.isCorruption(error), let path = store.checkedFile else { return error }
        return DamagedLedgerError(path: path, problem: "\(error)", marker: record("\(error)", for: path))
    }
}

extension Ledger {
    /// Refuses a damaged ledger file for writing (see ``LedgerSoundness``).
    func requireSound() throws { try LedgerSoundness.requireSound(store) }

    /// Records that the ledger file at `path` is damaged (`verify` found it): writers refuse it
    /// until the marker `<path>.damaged` is removed. Returns the marker's path, or `nil` for a
    /// PostgreSQL URL or when it cannot be written.
    @discardableResult
    public static func recordDamage(_ problem: String, at path: String) -> String? {
        guard case .sqlite = StoreLocation(path) else { return nil }
        return LedgerSoundness.record(problem, for: path)
    }
}
