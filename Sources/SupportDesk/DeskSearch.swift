import Projections

/// Where the search box sends an identifier, from what the ledger resolved it to (the groups of
/// `Ledger.groupKeys(for:)`, the members of `Ledger.memberAccess`, as `group show` and
/// `member show` resolve it). Pure.
public enum DeskSearch {
    /// One group or member an identifier names.
    public struct Match: Sendable, Hashable {
        /// The group at the desk's clocks.
        public var group: GroupState
        /// The member it names in that group, if it names a member.
        public var member: MemberState?
        /// How it matched: "group key", "group id", "purchaser", "member (CLAIM)" ….
        public var how: String

        /// Creates a match.
        public init(group: GroupState, member: MemberState?, how: String) {
            self.group = group
            self.member = member
            self.how = how
        }
    }

    /// Where to go.
    public enum Outcome: Sendable, Hashable {
        /// The group page of this key (a group key, group id or purchaser identifier).
        case group(String)
        /// The member page of the identifier (members of one group only).
        case member(String)
        /// Several groups: a list to pick from.
        case matches([Match])
        /// Nothing matches.
        case nothing
    }

    /// Resolves `query`. `groups` are the states of the groups it resolves to, `members` the
    /// members it names in them.
    ///
    /// A group key or group id opens the group; any other identifier of a person (a purchaser's
    /// app transaction or renewal transaction id included) opens that person's page when every
    /// match is in one group (the page answers for the person and links to the group); otherwise
    /// the matches are listed.
    public static func resolve(_ query: String, groups: [GroupState], members: [(group: GroupState, member: MemberState)]) -> Outcome {
        if let named = groups.first(where: { $0.groupKey == query }) ?? groups.first(where: { $0.groupIds.contains(query) }) {
            return .group(named.groupKey)
        }
        let groupsOfMatches = Set(members.map(\.group.groupKey))
        if !members.isEmpty, groupsOfMatches.count == 1 { return .member(query) }
        if members.isEmpty {
            if groups.count == 1, let only = groups.first { return .group(only.groupKey) }
            if groups.isEmpty { return .nothing }
        }
        var matches = members.map { entry in
            Match(group: entry.group, member: entry.member,
                  how: entry.member.role == .purchaser ? "purchaser" : "member (\(entry.member.role.rawValue))")
        }
        for group in groups where !groupsOfMatches.contains(group.groupKey) {
            matches.append(Match(group: group, member: nil, how: "mentioned by the group's events"))
        }
        return .matches(matches)
    }
}
