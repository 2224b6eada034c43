import AppStoreModels
import Foundation

/// A `serve` deployment's configuration file (`seatledger serve --config FILE`): the ledgers it
/// serves by name, the listeners, and the ledger that keeps notifications no ledger records.
///
/// ```json
/// {
///   "listen": "0.0.0.0:8080",
///   "supportListen": "127.0.0.1:8081",
///   "unroutable": "focus-production",
///   "ledgers": [
///     {"name": "focus-production", "db": "/var/lib/seatledger/focus-production.sqlite",
///      "anchor": "/var/lib/seatledger/focus-production.anchor"},
///     {"name": "focus-sandbox", "db": "${FOCUS_SANDBOX_DB}", "credentials": "/etc/seatledger/focus-api.json"}
///   ]
/// }
/// ```
///
/// Every string may name environment variables as `${NAME}` (what a container sets: a
/// PostgreSQL URL with its password stays out of the file); an unset one is an error. A member
/// the format does not have is an error naming it, as a typo should be. Each ledger keeps its
/// own app and environment, chain, quarantine, tokens and anchor: the file only says where
/// they are.
public struct DeploymentFile: Sendable, Equatable {
    /// One ledger of the deployment.
    public struct LedgerEntry: Sendable, Equatable {
        /// Its name: `/notifications/{name}`, `?ledger=`, the `ledger` label and log field.
        public var name: String
        /// Its location, as `--db` takes it (a SQLite path or a `postgresql://` URL).
        public var db: String
        /// Its head anchor file (as `serve --anchor`), if any.
        public var anchor: String?
        /// The App Store Server API credentials file of its app for the seat endpoints (as `--credentials`).
        public var credentials: String?
        /// The App Store Server API base URL (as `--api-base-url`).
        public var apiBaseURL: String?

        /// Creates an entry.
        public init(name: String, db: String, anchor: String? = nil, credentials: String? = nil, apiBaseURL: String? = nil) {
            self.name = name
            self.db = db
            self.anchor = anchor
            self.credentials = credentials
            self.apiBaseURL = apiBaseURL
        }
    }

    /// The API listener (`HOST:PORT`), else `serve`'s `--listen` default.
    public var listen: String?
    /// The support desk's listener (`[HOST:]PORT`), if any.
    public var supportListen: String?
    /// Whether the desk may listen off loopback (behind a sign-in proxy).
    public var supportListenPublic: Bool
    /// The ledger whose quarantine keeps notifications that fit no ledger (default the first).
    public var unroutable: String?
    /// The ledgers, in the order searches and answers list them.
    public var ledgers: [LedgerEntry]

    /// The ledger named `name`.
    public func ledger(named name: String) -> LedgerEntry? { ledgers.first { $0.name == name } }

    /// A deployment of `ledgers` (at least one), as a file would give it.
    public init(listen: String? = nil, supportListen: String? = nil, supportListenPublic: Bool = false, unroutable: String? = nil,
                ledgers: [LedgerEntry]) {
        self.listen = listen
        self.supportListen = supportListen
        self.supportListenPublic = supportListenPublic
        self.unroutable = unroutable
        self.ledgers = ledgers
    }

    /// Reads and checks the file at `path`.
    public static func read(_ path: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(DeploymentFileError) -> DeploymentFile {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw DeploymentFileError(file: path, message: FileManager.default.fileExists(atPath: path) ? "cannot be read" : "does not exist")
        }
        return try parse(data, file: path, environment: environment)
    }

    /// Parses and checks a configuration's bytes; `file` names it in errors.
    public static func parse(_ data: Data, file: String, environment: [String: String]) throws(DeploymentFileError) -> DeploymentFile {
        func fail(_ message: String) -> DeploymentFileError { DeploymentFileError(file: file, message: message) }
        let root: JSONValue
        do { root = try JSONValue.parse(bytes: [UInt8](data)) } catch { throw fail("is not JSON: \(error)") }
        guard case .object(let top) = root else { throw fail("must be a JSON object with \"ledgers\"") }
        try known(top, ["listen", "supportListen", "supportListenPublic", "unroutable", "ledgers"], at: "the top level", fail)

        func string(_ members: [String: JSONValue], _ key: String, at place: String) throws(DeploymentFileError) -> String? {
            guard let value = members[key], value != .null else { return nil }
            guard let text = value.stringValue, !text.isEmpty else { throw fail("\(place): \"\(key)\" must be a non-empty string") }
            return try expand(text, at: "\(place) \"\(key)\"", environment: environment, fail)
        }

        guard case .array(let entries)? = top["ledgers"], !entries.isEmpty else {
            throw fail("needs \"ledgers\": an array of at least one {\"name\", \"db\"}")
        }
        var ledgers: [LedgerEntry] = []
        for (index, entry) in entries.enumerated() {
            let place = "ledgers[\(index)]"
            guard case .object(let members) = entry else { throw fail("\(place) must be an object with \"name\" and \"db\"") }
            try known(members, ["name", "db", "anchor", "credentials", "apiBaseURL"], at: place, fail)
            guard let name = try string(members, "name", at: place) else { throw fail("\(place) needs \"name\"") }
            guard ServedLedger.isValidName(name) else {
                throw fail("\(place): name \(name.debugDescription) may hold only a-z, 0-9, '-', '_' and '.' (at most 64, not starting with '.'): "
                           + "it is a URL path segment and a metric label")
            }
            guard !ledgers.contains(where: { $0.name == name }) else { throw fail("\(place): the name \(name) is used twice") }
            guard let db = try string(members, "db", at: place) else { throw fail("\(place) (\(name)) needs \"db\": a SQLite path or a postgresql:// URL") }
            ledgers.append(LedgerEntry(name: name, db: db, anchor: try string(members, "anchor", at: place),
                                       credentials: try string(members, "credentials", at: place),
                                       apiBaseURL: try string(members, "apiBaseURL", at: place)))
        }
        let unroutable = try string(top, "unroutable", at: "the top level")
        if let unroutable, !ledgers.contains(where: { $0.name == unroutable }) {
            throw fail("\"unroutable\" names \(unroutable), which is not one of the ledgers (" + ledgers.map(\.name).joined(separator: ", ") + ")")
        }
        var supportListenPublic = false
        if let value = top["supportListenPublic"], value != .null {
            guard let flag = value.boolValue else { throw fail("\"supportListenPublic\" must be true or false") }
            supportListenPublic = flag
        }
        return DeploymentFile(listen: try string(top, "listen", at: "the top level"), supportListen: try string(top, "supportListen", at: "the top level"),
                              supportListenPublic: supportListenPublic, unroutable: unroutable, ledgers: ledgers)
    }

    private static func known(_ members: [String: JSONValue], _ allowed: Set<String>, at place: String,
                              _ fail: (String) -> DeploymentFileError) throws(DeploymentFileError) {
        for key in members.keys.sorted() where !allowed.contains(key) {
            throw fail("\(place): unknown member \"\(key)\" (it takes " + allowed.sorted().joined(separator: ", ") + ")")
        }
    }

    /// `text` with each `${NAME}` replaced by the variable's value.
    static func expand(_ text: String, at place: String, environment: [String: String],
                       _ fail: (String) -> DeploymentFileError) throws(DeploymentFileError) -> String {
        var out = ""
        var rest = Substring(text)
        while let start = rest.range(of: "${") {
            out += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else { throw fail("\(place): \"${\" without a closing \"}\"") }
            let name = String(rest[start.upperBound..<end])
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                throw fail("\(place): ${\(name)} is not an environment variable's name")
            }
            guard let value = environment[name] else { throw fail("\(place) names ${\(name)}, which is not set") }
            out += value
            rest = rest[rest.index(after: end)...]
        }
        return out + rest
    }
}

/// A configuration file that cannot be used: the file and what is wrong, where.
public struct DeploymentFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file.
    public let file: String
    /// What is wrong.
    public let message: String
    /// "FILE: MESSAGE".
    public var description: String { "\(file): \(message)" }
}
