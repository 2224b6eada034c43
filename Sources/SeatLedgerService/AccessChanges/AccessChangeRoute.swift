import AppStoreModels
import HTTPServer
import LedgerStorage
import SeatLedger

extension LedgerService {
    /// `GET /v1/access-changes` of one ledger: the stored transitions after feed position `after`
    /// (`product`, `kind` filter them), each `{"seq", "transition"}`; `next` is the cursor to keep.
    /// With `wait` and nothing after the cursor, it waits up to that many seconds for the feed to
    /// grow (a long poll: this process's follower signals what it stored, and what another
    /// process stored as soon as it next derives, within its idle second), then answers with what there is.
    func accessChanges(_ request: HTTPRequest, of served: ServedLedger) async throws -> HTTPResponse {
        let after = try ReadRoutes.integer(request, "after", range: 0...Int64.max) ?? 0
        let limit = Int(try ReadRoutes.integer(request, "limit", range: 1...Int64(configuration.maxPageSize)) ?? 100)
        let waitSeconds = try ReadRoutes.integer(request, "wait", range: 0...configuration.maxChangeWait.components.seconds) ?? 0
        // A filter given empty is refused, not read as "no filter" (the document says minLength 1).
        func filterValue(_ name: String, _ what: String) throws(APIError) -> String? {
            guard let value = request.queryValue(name) else { return nil }
            guard !value.isEmpty else { throw .badParameter(name, value, expected: what) }
            return value
        }
        var filter = AccessTransitionFilter(productId: try filterValue("product", "a product id"))
        if let kind = try filterValue("kind", "a transition kind (GAINED, LOST, END_MOVED, …)") { filter.kinds = [kind] }
        let query = filter
        func page() async throws -> (rows: [StoredAccessTransition], last: Int64, cursor: AccessCursor, head: Int64) {
            do {
                return try await served.pool.read { ledger in
                    let status = try ledger.accessDerivationStatus()
                    return (try ledger.accessTransitions(after: after, limit: limit, filter: query), status.lastSeq, status.cursor, status.head)
                }
            } catch {
                throw LedgerService.describe(error)
            }
        }
        var read = try await page()
        guard after <= read.last else {
            throw APIError(status: 409, code: "cursor_past_head",
                           message: "after=\(after) is past the feed's last position, \(read.last): this cursor was not given by this ledger as it is (restored from a backup?); read again from a position at or before \(read.last)",
                           details: ["last": .int(read.last)])
        }
        // Wait only when nothing at all follows the cursor (rows a filter leaves out are an answer: `next` moves past them).
        if read.rows.isEmpty, after >= read.last, waitSeconds > 0 {
            _ = await served.accessChanges.feed.wait(after: read.last, timeout: .seconds(waitSeconds))
            read = try await page()
        }
        let changes: [JSONValue] = read.rows.map { row in
            ["seq": .int(row.seq), "transition": (try? JSONValue.parse(row.body)) ?? .string(row.body)]
        }
        // A full page ends at its last row; a short one looked at everything through `last`, rows a
        // filter left out included, so the next read starts after them.
        let next = read.rows.count == limit ? read.rows[limit - 1].seq : max(after, read.last, read.rows.last?.seq ?? 0)
        return .json(["changes": .array(changes), "next": .int(next), "last": .int(read.last),
                      "derived": ["position": .int(read.cursor.position), "horizon": .timestamp(read.cursor.horizon == 0 ? nil : read.cursor.horizon),
                                  "head": .int(read.head)]])
    }
}
