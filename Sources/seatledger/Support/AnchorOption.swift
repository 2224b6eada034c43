import Foundation
import LedgerStorage
import SeatLedger

/// `--anchor FILE` of the commands that write (`ingest`): checked before the first append, then
/// kept current after every committed batch; a trust configuration that changed underneath it
/// stops the command (``failure``).
final class AnchorOption {
    /// The anchor file.
    let file: String
    /// Why the command must stop (the trust configuration changed since the anchor), once it must.
    private(set) var failure: InputError?
    /// What stops the command's loop when ``failure`` is set.
    private let stop: StopSignal?

    /// `--anchor FILE`; each command says in its help what it does with the anchor.
    static let option = Option<String?>("anchor", value: "FILE", help: "a head anchor (see `seatledger verify --anchor`)")

    init(file: String, stop: StopSignal?) {
        self.file = file
        self.stop = stop
    }

    /// The option of `arguments`, checked against `ledger`; `nil` when not given.
    ///
    /// A ledger that does not continue the anchor (a truncated tail, a rewritten chain) is refused
    /// for writing: appending would bury the evidence.
    static func checked(_ arguments: Arguments, ledger: Ledger, stop: StopSignal? = nil) throws -> AnchorOption? {
        guard let file = try arguments[option] else { return nil }
        do {
            if let problem = try ledger.headAnchorProblem(file) {
                throw InputError(message: "refusing to write: \(problem). Run `seatledger verify --anchor \(file)` and restore the ledger "
                                 + "from a backup; do not replace the anchor unless you know why the log changed")
            }
        } catch let error as HeadAnchorError {
            throw InputError(message: "--anchor \(error.description)")
        }
        return AnchorOption(file: file, stop: stop)
    }

    /// Checks `ledger` against the anchor of `--anchor` before a trust change the command makes
    /// (`token add|revoke`): a ledger that does not continue the anchor is refused, so the new
    /// anchor written afterwards (``record(_:ledger:)``) signs off nothing else. The file, or `nil`.
    static func checkedBeforeTrustChange(_ arguments: Arguments, ledger: Ledger) throws -> String? {
        try checkedBeforeTrustChange(arguments) { try ledger.headAnchorProblems($0) }
    }

    /// ``checkedBeforeTrustChange(_:ledger:)`` for a command that changes the trust
    /// configuration through the store itself (`config add-root`).
    static func checkedBeforeTrustChange(_ arguments: Arguments, store: any LedgerStore) throws -> String? {
        try checkedBeforeTrustChange(arguments) { try HeadAnchor.problems($0, against: store) }
    }

    private static func checkedBeforeTrustChange(_ arguments: Arguments, problems: (String) throws -> [String]) throws -> String? {
        guard let file = try arguments[option] else { return nil }
        do {
            let problems = try problems(file)
            guard problems.isEmpty else {
                throw InputError(message: "refusing to change the trust configuration: \(problems.joined(separator: "; ")). Run "
                                 + "`seatledger verify --anchor \(file)` first")
            }
        } catch let error as HeadAnchorError {
            throw InputError(message: "--anchor \(error.description)")
        }
        return file
    }

    /// Writes the ledger's heads and trust configuration to `file` after a trust change the command made.
    static func record(_ file: String, ledger: Ledger) throws {
        try record(file) { try ledger.writeHeadAnchor(to: file) }
    }

    /// ``record(_:ledger:)`` for a command that changed the trust configuration through the store.
    static func record(_ file: String, store: any LedgerStore) throws {
        try record(file) { try HeadAnchor(headOf: store).write(to: file) }
    }

    private static func record(_ file: String, write: () throws -> Void) throws {
        do {
            try write()
        } catch let error as HeadAnchorError {
            throw InputError(message: "--anchor \(error.description) (the change was made; re-run the command with --anchor, or "
                             + "write the anchor with `seatledger verify --anchor`)")
        }
    }

    /// Moves the anchor to the ledger's head (after a commit). A failed write is reported on
    /// stderr; a trust configuration changed since the anchor stops the command (``failure``).
    func advance(_ ledger: Ledger) {
        guard failure == nil else { return }
        do {
            try ledger.advanceHeadAnchor(file)
        } catch let error as HeadAnchorError where error.trustChanged {
            failure = InputError(message: "stopped: \(error.description). Find out who changed it (`seatledger verify --anchor \(file)` names "
                                 + "each change); restore the ledger, or make the change with SeatLedger and --anchor")
            stop?.request()
        } catch {
            Terminal.err("seatledger: warning: could not update the head anchor: \(error)")
        }
    }
}
