import SeatLedger

extension Ledger {
    /// Warns on stderr when the stored projections were built by older grouping rules than this
    /// build's (stdout, `--json` included, is unchanged), so a read after an upgrade does not
    /// silently show groups a rebuild would change.
    func warnIfProjectionsOutdated(command: String) {
        guard let warning = try? outdatedProjectionsWarning() else { return }
        Terminal.note("seatledger \(command): warning: \(warning)")
    }
}
