import AppStoreModels
import Projections

extension MemberInGroup {
    /// One element of the `member show --json` contract: `{"groupKey", "status", "asOf", "member"}`
    /// (`member` is the member object of `group show --json`). The CLI and `GET /v1/members/{id}`
    /// both print this, so they cannot drift apart.
    public var json: JSONValue {
        ["groupKey": .string(group.groupKey), "status": .string(group.status.rawValue),
         "asOf": .timestamp(group.asOf), "member": member.json]
    }

    /// The whole `member show --json` output: one ``json`` object per group, in order.
    public static func json(_ entries: [MemberInGroup]) -> JSONValue {
        .array(entries.map(\.json))
    }
}
