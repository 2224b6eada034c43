import EventStore
import Foundation
import LedgerStorage

/// Where a ledger lives: an embedded SQLite file (the default) or a PostgreSQL database.
///
/// ```swift
/// StoreLocation("ledger.sqlite")                                   // .sqlite(path:)
/// StoreLocation("postgresql://seatledger@db.internal/ledger")      // .postgres(url:)
/// ```
public enum StoreLocation: Sendable, Equatable, CustomStringConvertible {
    /// A SQLite file.
    case sqlite(path: String)
    /// A PostgreSQL connection URL (`postgresql://` or `postgres://`).
    case postgres(url: String)

    /// Parses a `--db` value: a `postgresql://` or `postgres://` URL, else a file path.
    public init(_ text: String) {
        let lowered = text.lowercased()
        if lowered.hasPrefix("postgresql://") || lowered.hasPrefix("postgres://") {
            self = .postgres(url: text)
        } else {
            self = .sqlite(path: text)
        }
    }

    /// The location for messages: the path, or the URL without its password.
    public var description: String {
        switch self {
        case .sqlite(let path): return path
        case .postgres(let url): return Self.redacted(url)
        }
    }

    /// `url` without its password, as the registered engine redacts it; without an engine, the
    /// scheme and host only (everything before the last `@` of the authority is hidden).
    public static func redacted(_ url: String) -> String {
        if let engine = postgresEngine { return engine.redacted(url: url) }
        guard let schemeEnd = url.range(of: "://") else { return url }
        let rest = url[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(where: { "/?#".contains($0) }) ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return url }
        return String(url[..<schemeEnd.upperBound]) + "***" + String(rest[at...])
    }

    /// The engine for `postgresql://` locations, when this process registered one.
    private static var postgresEngine: (any LedgerStoreEngine)? { LedgerStoreEngines.engine(forScheme: "postgresql") }

    /// The registered PostgreSQL engine, or the error saying how to get one.
    private static func requirePostgresEngine(_ url: String) throws -> any LedgerStoreEngine {
        guard let engine = postgresEngine else { throw LedgerStoreError.engineNotLinked(location: redacted(url)) }
        return engine
    }

    /// The error for a "file path" that is a URL of another kind (`redis://…`, `https://…`): no
    /// ledger can live there, and "no ledger at redis://…; create one" would mislead.
    static func unsupportedURL(_ path: String) -> LedgerStoreError? {
        guard let schemeEnd = path.range(of: "://"), !path[..<schemeEnd.lowerBound].isEmpty,
              path[..<schemeEnd.lowerBound].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return nil }
        let scheme = path[..<schemeEnd.lowerBound]
        let hint = scheme.lowercased() == "redis" ? " (a Redis stream is an ingest source: `ingest --from \(scheme)://…`)" : ""
        return .unsupportedLocation(scheme: String(scheme), hint: hint)
    }

    /// Opens the existing ledger at this location.
    public func open(readOnly: Bool = false) throws -> any LedgerStore {
        switch self {
        case .sqlite(let path):
            if let error = Self.unsupportedURL(path) { throw error }
            return try EventStore.open(at: path, readOnly: readOnly)
        case .postgres(let url): return try Self.requirePostgresEngine(url).open(url: url, readOnly: readOnly)
        }
    }

    /// Creates a new ledger at this location with its trust configuration.
    public func create(configuration: LedgerConfiguration, roots: [StoredTrustRoot]) throws -> any LedgerStore {
        switch self {
        case .sqlite(let path):
            if let error = Self.unsupportedURL(path) { throw error }
            return try EventStore.create(at: path, configuration: configuration, roots: roots)
        case .postgres(let url): return try Self.requirePostgresEngine(url).create(url: url, configuration: configuration, roots: roots)
        }
    }
}
