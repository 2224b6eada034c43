import Foundation
import SeatLedger

/// `--anchor FILE` of the commands that write (`ingest`): checked before the first append, then
/// kept current after every committed batch.
struct AnchorOption {
    /// The anchor file.
    let file: String

    /// The option of `arguments`, checked against `ledger`; `nil` when not given.
    ///
    /// A ledger that does not continue the anchor (a truncated tail, a rewritten chain) is refused
    /// for writing: appending would bury the evidence.
    static func checked(_ arguments: Arguments, ledger: Ledger) throws -> AnchorOption? {
        guard let file = arguments.value("anchor") else { return nil }
        do {
            if let problem = try HeadAnchor.problem(file, against: ledger.store) {
                throw InputError(message: "refusing to write: \(problem). Run `seatledger verify --anchor \(file)` and restore the ledger "
                                 + "from a backup; do not replace the anchor unless you know why the log changed")
            }
        } catch let error as HeadAnchorError {
            throw InputError(message: "--anchor \(error.description)")
        }
        return AnchorOption(file: file)
    }

    /// Moves the anchor to the ledger's head (after a commit). A failed write is reported on stderr once per message.
    func advance(_ ledger: Ledger) {
        do {
            try HeadAnchor.advance(file, to: ledger.store)
        } catch {
            Terminal.err("seatledger: warning: could not update the head anchor: \(error)")
        }
    }
}
