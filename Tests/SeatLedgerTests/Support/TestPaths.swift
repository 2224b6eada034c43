import Foundation

/// Where test inputs live. The repository root is derived from this file's path, so tests work
/// from any working directory and with any `--scratch-path`.
///
/// Shared fixtures (Apple's test vectors and roots) are read in place from
/// `<repo>/../shared/fixtures/`; never copy them into the repository.
enum TestPaths {
    /// The repository root (the directory holding `Package.swift`).
    static let repoRoot: URL = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent()  // Support
        .deletingLastPathComponent()  // SeatLedgerTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()

    /// `Tools/pki`: the committed test PKI (see its README for the prefixes).
    static let pki = repoRoot.appendingPathComponent("Tools/pki", isDirectory: true)

    /// The main test root, `Tools/pki/root.pem`.
    static let testRoot = pki.appendingPathComponent("root.pem")

    /// The all-P-256 variant root, `Tools/pki/p256-root.pem`.
    static let p256Root = pki.appendingPathComponent("p256-root.pem")

    /// The impostor root, `Tools/pki/rogue-root.pem`.
    static let rogueRoot = pki.appendingPathComponent("rogue-root.pem")

    /// A file in `Tools/pki`.
    static func pkiFile(_ name: String) -> URL { pki.appendingPathComponent(name) }

    /// `<repo>/../shared/fixtures`, or `$SEATLEDGER_SHARED_FIXTURES` when set (a checkout, such as
    /// a git worktree, whose parent directory holds no `shared/`).
    static let sharedFixtures: URL = {
        if let override = ProcessInfo.processInfo.environment["SEATLEDGER_SHARED_FIXTURES"], !override.isEmpty {
            return URL(fileURLWithPath: override, isDirectory: true)
        }
        return repoRoot.deletingLastPathComponent().appendingPathComponent("shared/fixtures", isDirectory: true)
    }()

    /// Apple's test vectors (`apple-test-vectors/`, see its README).
    static let appleTestVectors = sharedFixtures.appendingPathComponent("apple-test-vectors", isDirectory: true)

    /// Apple's test CA that signs the test vectors.
    static let appleTestCA = appleTestVectors.appendingPathComponent("certs/testCA.der")

    /// One of Apple's signed samples in `mock_signed_data/`.
    static func appleSignedSample(_ name: String) -> URL {
        appleTestVectors.appendingPathComponent("mock_signed_data").appendingPathComponent(name)
    }

    /// Apple Root CA - G3, the production root.
    static let appleRootG3 = sharedFixtures.appendingPathComponent("apple-roots/AppleRootCA-G3.cer")
}
