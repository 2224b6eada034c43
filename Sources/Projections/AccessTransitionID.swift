import AppStoreModels

/// The stable id of an access transition: a deterministic string of what makes it unique, so
/// that deriving the same facts again (a restart, a rebuild, another node) gives the same id.
///
/// `at1;<scope>;<subject>;<product>;<cause>;<kind>`, where `<scope>` is ``AccessScope/key``,
/// `<subject>` ``AccessSubject/key``, `<product>` the product id (empty for none), `<cause>`
/// `e:<eventId>` for news and `t:<moment>:<eventId of the last event known>` for time (the
/// moment in epoch milliseconds), and `<kind>` ``AccessTransitionKind``. Each part has `%` and
/// `;` percent-encoded, so the parts read back unambiguously. Ids are unique within a ledger;
/// across ledgers, pair them with the app and environment.
public enum AccessTransitionID {
    /// The version prefix of ids made by this scheme.
    public static let prefix = "at1"

    /// The id of a transition of `key`, of `kind`, caused by `cause`.
    public static func make(key: AccessKey, kind: AccessTransitionKind, cause: TransitionCause, at moment: EpochMillis) -> String {
        let causePart: String
        if cause.kind == .news, let event = cause.event {
            causePart = "e:" + escape(event.eventId)
        } else {
            causePart = "t:\(moment):" + escape(cause.knownThrough.eventId)
        }
        return [prefix, escape(key.scope), escape(key.subject), escape(key.productId ?? ""), causePart, escape(kind.rawValue)]
            .joined(separator: ";")
    }

    /// `part` with `%` and `;` percent-encoded.
    static func escape(_ part: String) -> String {
        guard part.contains(where: { $0 == "%" || $0 == ";" }) else { return part }
        return part.replacingPercentAndSemicolon()
    }
}

private extension String {
    func replacingPercentAndSemicolon() -> String {
        var out = ""
        out.reserveCapacity(utf8.count + 8)
        for character in self {
            switch character {
            case "%": out += "%25"
            case ";": out += "%3B"
            default: out.append(character)
            }
        }
        return out
    }
}
