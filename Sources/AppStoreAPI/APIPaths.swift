import AppStoreModels
import Foundation

/// Hosts and path prefixes of the App Store Server API.
///
/// The classic endpoints live under `/inApps` (documented URLs). For the group and seat
/// endpoints (`/groups/v1/…`) Apple's DocC export does not show the full URL
/// (`../shared/reference/appstore-multiseat-facts.md` §2, §13.1): whether `/inApps` precedes
/// `/groups/v1` is unknown. Apple's Claim Seat page as quoted in the seed notes shows
/// `https://api.storekit.apple.com/groups/v1/transactions/{originalTransactionId}/seats`, so the
/// default is no prefix. **Change ``groupsPrefix`` (one constant) if Apple's live page says
/// otherwise**; the ledger reads identifiers by path segment, so recorded envelopes stay readable
/// either way. A library user can also override it per client with
/// ``AppStoreAPIConfiguration/groupsPathPrefix``.
public enum AppStoreAPIPaths {
    /// Prefix in front of `/groups/v1/…` (group and seat endpoints). Unknown upstream; see the type's notes.
    public static let groupsPrefix = ""
    /// Prefix of the classic endpoints (`/inApps/v1/…`, `/inApps/v2/…`).
    public static let classicPrefix = "/inApps"

    /// The production host (recommended since 2026-05-05).
    public static let productionBaseURL = "https://api.storekit.apple.com"
    /// The sandbox host (recommended since 2026-05-05).
    public static let sandboxBaseURL = "https://api.storekit-sandbox.apple.com"

    /// The default base URL for a ledger environment; `nil` for Xcode / LocalTesting, which have no server API.
    public static func baseURL(for environment: AppStoreEnvironment) -> String? {
        switch environment {
        case .production: return productionBaseURL
        case .sandbox: return sandboxBaseURL
        default: return nil
        }
    }

    /// How many days of notification history Apple keeps: 180 in Production, 30 in Sandbox.
    public static func notificationHistoryDays(for environment: AppStoreEnvironment) -> Int64 {
        environment == .production ? 180 : 30
    }

    /// Percent-encodes one path segment (identifiers are digits or UUIDs; anything else is escaped).
    static func segment(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }

    /// Encodes query items as `?a=1&b=2` (empty string for none), values percent-encoded.
    static func query(_ items: [(String, String)]) -> String {
        guard !items.isEmpty else { return "" }
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return "?" + items.map { name, value in
            "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value)"
        }.joined(separator: "&")
    }
}
