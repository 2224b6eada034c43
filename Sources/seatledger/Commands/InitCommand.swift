import AppStoreModels
import Foundation
import JWSVerification
import LedgerStorage
import SeatLedger

/// `seatledger init`: create a ledger file with its trust configuration.
enum InitCommand: Command {
    static let name = "init"
    static let summary = "create a ledger and record its trust configuration"
    /// `--bundle-id ID`: the app's bundle id.
    static let bundleId = Option<String?>("bundle-id", value: "ID", help: "the app's bundle id, e.g. com.example.reps")
    /// `--environment ENV`: one of the App Store's environments.
    static let environment = Option<AppStoreEnvironment?>(
        "environment", value: "ENV", help: "Production, Sandbox, Xcode or LocalTesting",
        completion: .words(AppStoreEnvironment.knownValues.sorted()), parse: OptionParser { text in
            let environment = AppStoreEnvironment(rawValue: text)
            guard environment.isKnown else {
                throw OptionValueError("must be one of \(AppStoreEnvironment.knownValues.sorted().joined(separator: ", ")), got \(text)")
            }
            return environment
        })
    /// `--app-apple-id N`: the app's Apple id, a positive number.
    static let appAppleId = Option<Int64?>(
        "app-apple-id", value: "N", help: "the app's Apple id (required for Production)", parse: OptionParser { text in
            guard let id = Int64(text), id > 0 else { throw OptionValueError("must be a positive number (the app's Apple id), got \(text)") }
            return id
        })
    /// `--root-cert FILE` (repeatable): a root certificate file.
    static let rootCert = Option<[String]>(repeating: "root-cert", value: "FILE",
                                           help: "a root certificate, DER or PEM (repeatable), e.g. AppleRootCA-G3.cer")
    static let options: [any DeclaredOption] = LedgerLocation.options + [bundleId, environment, appAppleId, rootCert, Flag.json]
    static let examples = [
        "seatledger init --db ledger.sqlite --bundle-id com.example.reps --environment Sandbox --root-cert AppleRootCA-G3.cer",
        "seatledger init --db demo.sqlite --bundle-id com.example.reps --environment Sandbox --root-cert Tools/pki/root.pem",
    ]
    static let help = """
    Usage: seatledger init --bundle-id ID --environment ENV --root-cert FILE [--root-cert FILE …]
                           [--app-apple-id N] [--db PATH|URL] [--json]

    Creates a ledger (a SQLite file, or the schema in an existing, empty PostgreSQL database
    named by a postgresql:// URL) and records the trust configuration in it, so later commands
    need no flags: the bundle id and environment every payload must name, the app Apple id
    (required for Production), and the root certificates (DER or PEM) signed payloads must chain
    to. On PostgreSQL it also creates the role seatledger_append (SELECT and INSERT on the log, no
    UPDATE or DELETE) when it has the privilege; give ingest nodes a login that is a member of it.

    Options:
    \(OptionHelp.lines(options, column: 23))

    Example:
      seatledger init --db ledger.sqlite --bundle-id com.example.reps --environment Sandbox \\
                      --root-cert AppleRootCA-G3.cer
    """

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        guard arguments.positionals.isEmpty else { throw UsageError(message: "unexpected argument \(arguments.positionals[0])") }
        // Every missing option at once, not one per attempt.
        let required: [any DeclaredOption] = [bundleId, environment, rootCert]
        let missing = required.filter { !arguments.contains($0) }
        if missing.count > 1 {
            throw UsageError(message: "\(missing.map { $0.declaration.spelled }.joined(separator: ", ")) are required (for example "
                             + "--bundle-id com.example.app --environment Production --app-apple-id N --root-cert AppleRootCA-G3.cer)")
        }
        let environment = try arguments.required(Self.environment)
        let appAppleId = try arguments[Self.appAppleId]
        let certificates = try arguments[rootCert]
        guard !certificates.isEmpty else { throw UsageError(message: "--root-cert is required (for example AppleRootCA-G3.cer)") }
        let anchors = try certificates.flatMap(loadRoot)
        let configuration = try LedgerConfiguration(bundleId: try arguments.required(bundleId),
                                                    environment: environment, appAppleId: appAppleId)
        let location = try LedgerLocation(arguments)
        let ledger = try location.create(configuration: configuration, rootCertificates: anchors)
        if arguments[Flag.json] {
            Terminal.json(try ConfigCommand.describe(ledger))
        } else {
            Terminal.out("Created ledger \(location.store)")
            Terminal.out(try ConfigCommand.text(ledger))
        }
        return .success
    }

    /// The root certificates (DER or PEM) in the file at `path`: "cannot read PATH: no such file"
    /// for a missing file, a short reason for a file that is not a certificate.
    ///
    /// A certificate that is not a self-issued CA (a leaf, an intermediate) is refused: chains end
    /// only at a root, so every payload would be quarantined as `chain_not_trusted`.
    static func loadRoot(_ path: String) throws -> [TrustAnchor] {
        try FileChecks.requireReadable(path)
        let anchors: [TrustAnchor]
        do {
            anchors = try TrustAnchor.load(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw InputError(message: "cannot read root certificate \(path): \(FileChecks.reason(error))")
        }
        let roots = anchors.filter(\.isSelfIssuedCertificateAuthority)
        guard !roots.isEmpty else {
            throw UsageError(message: "\(path) is not a root certificate (\(anchors.first?.subject ?? "no certificate") is not a self-issued CA; a leaf or an intermediate cannot end a chain): give a root such as AppleRootCA-G3.cer")
        }
        // A bundle (root plus intermediates, say): the roots are kept, the others named and skipped.
        for skipped in anchors where !skipped.isSelfIssuedCertificateAuthority {
            Terminal.note("seatledger: warning: \(path): skipping \(skipped.subject): not a self-issued CA, so it cannot be a root")
        }
        return roots
    }
}
