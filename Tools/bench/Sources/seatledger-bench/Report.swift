import Foundation

/// `report`: merges the step results (one JSON object per file in `--parts`), derives the ratios,
/// checks the targets, prints the table and writes `bench-results.json`.
///
/// A missed target is reported (FAIL in the table, `"pass": false` in the JSON), never an error:
/// the exit status is 0 whenever the report could be written.
enum Report {
    struct Target {
        let key: String
        let label: String
        let op: String        // ">=", "<" or "<="
        let bound: Double
        func check(_ value: Double?) -> Bool? {
            guard let value, value.isFinite else { return nil }
            switch op {
            case ">=": return value >= bound
            case "<=": return value <= bound
            default: return value < bound
            }
        }
    }

    /// The targets `run` judges, each a figure users need, stated as a ratio against a baseline
    /// measured in the same run wherever one exists (PERFORMANCE.md says why each was chosen).
    /// Every other figure (absolute ingest and rebuild rates, the cold rebuild against its floor,
    /// the webhook against file ingest, memory) is reported without a target.
    static let targets = [
        Target(key: "ratio_vs_peer", label: "ingest ≥ 20× Apple's Python library", op: ">=", bound: 20),
        Target(key: "webhook_vs_peer_server_c64_ratio", label: "webhook ≥ 10× the Python peer receiver at 64 connections", op: ">=", bound: 10),
        Target(key: "latency_p99_ms", label: "acknowledgement p99 < 25 ms at 200/s", op: "<", bound: 25),
        Target(key: "members_get_p99_ms", label: "GET /v1/members p99 < 5 ms (16 connections)", op: "<", bound: 5),
        Target(key: "members_get_per_s", label: "GET /v1/members ≥ 5,000 requests/s (16 connections)", op: ">=", bound: 5000),
        Target(key: "entitlements_vs_members_get_ratio", label: "GET /v1/entitlements ≥ 0.9× GET /v1/members requests/s (same run)", op: ">=", bound: 0.9),
        Target(key: "entitlements_get_p99_ms", label: "GET /v1/entitlements p99 < 5 ms (16 connections)", op: "<", bound: 5),
        Target(key: "deployment_entitlements_ratio", label: "one serve of 10 ledgers: GET /v1/entitlements over all ≥ 0.8× one ledger's (same run)", op: ">=", bound: 0.8),
        Target(key: "deployment_webhook_ratio", label: "one serve of 10 ledgers: webhook spread over all ≥ 0.8× one ledger's (64 connections, same run)", op: ">=", bound: 0.8),
        Target(key: "groups_json_per_1000_growth", label: "groups --json linear: s per 1,000 groups, largest / smallest size < 2", op: "<", bound: 2),
        Target(key: "rebuild_warm_vs_floor_time_ratio", label: "rebuild, warm ≤ 2× its storage floor", op: "<=", bound: 2),
        Target(key: "pg_ingest_2_vs_1_of_ceiling", label: "PostgreSQL: 2 ingest workers ≥ 80% of the measured ceiling", op: ">=", bound: 0.8),
        Target(key: "access_intake_ratio", label: "webhook intake with access changes on ≥ 0.9× off (64 connections, same run)", op: ">=", bound: 0.9),
        Target(key: "access_webhook_p99_ms", label: "notification → access.changed webhook received, p99 < 100 ms at 200/s", op: "<", bound: 100),
        Target(key: "lapses_seconds", label: "every lapse of groups ending in one minute derived within 60 s", op: "<", bound: 60),
    ]

    static func run(_ arguments: [String]) throws {
        let options = try Options(arguments, valued: ["--parts", "--out"])
        let partsDirectory = try options.string("--parts")
        let out = try options.string("--out")
        var r: [String: Any] = [:]
        let files = try FileManager.default.contentsOfDirectory(atPath: partsDirectory).filter { $0.hasSuffix(".json") }.sorted()
        for file in files {
            let data = try Data(contentsOf: URL(fileURLWithPath: partsDirectory + "/" + file))
            // A step that broke may have left an empty or partial file: skip it (the run says which).
            guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
                FileHandle.standardError.write(Data("report: skipping \(file) (not a JSON object)\n".utf8))
                continue
            }
            r.merge(object) { _, new in new }
        }
        func number(_ key: String) -> Double? {
            if let n = r[key] as? NSNumber { return n.doubleValue }
            return nil
        }

        // Derived figures.
        if let n = number("ingest_notifications"), let s = number("ingest_seconds"), s > 0, (number("ingest_quarantined") ?? 0) == 0 {
            r["ingest_notifications_per_s"] = round(n / s, 1)
        }
        if let ours = number("ingest_notifications_per_s"), let peer = number("peer_notifications_per_s"), peer > 0 {
            r["ratio_vs_peer"] = round(ours / peer, 2)
        }
        if let ours = number("ingest_notifications_per_s"), let bound = number("es256_verifies_per_s"), bound > 0 {
            r["fraction_of_verify_bound"] = round(ours * 3 / bound, 4)
        }
        if let ours = number("ingest_notifications_per_s"), let bound = number("jws_verifies_per_s"), bound > 0 {
            r["fraction_of_jws_bound"] = round(ours * 3 / bound, 4)
        }
        // `run` reports the ratio of the median of three alternating pairs; a part without it
        // (an older run) has only one pair.
        if number("entitlements_vs_members_get_ratio") == nil, let entitlements = number("entitlements_get_per_s"),
           let members = number("members_get_per_s"), members > 0 {
            r["entitlements_vs_members_get_ratio"] = round(entitlements / members, 3)
        }
        if let events = number("rebuild_events"), let s = number("rebuild_seconds"), s > 0 {
            r["rebuild_events_per_s"] = round(events / s, 0)
        }
        if let events = number("rebuild_events"), let s = number("rebuild_warm_seconds"), s > 0 {
            r["rebuild_warm_events_per_s"] = round(events / s, 0)
        }
        // How far each rebuild is above the storage floor (SQLite alone doing its writes).
        if let s = number("rebuild_seconds"), let floor = number("rebuild_floor_cold_seconds"), floor > 0 {
            r["rebuild_vs_floor_time_ratio"] = round(s / floor, 2)
        }
        if let s = number("rebuild_warm_seconds"), let floor = number("rebuild_floor_warm_seconds"), floor > 0 {
            r["rebuild_warm_vs_floor_time_ratio"] = round(s / floor, 2)
        }
        if let events = number("pg_rebuild_events"), let s = number("pg_rebuild_seconds"), s > 0 {
            r["pg_rebuild_events_per_s"] = round(events / s, 0)
            if let sqlite = number("sqlite_rebuild_same_seconds"), sqlite > 0 {
                r["sqlite_rebuild_same_events_per_s"] = round(events / sqlite, 0)
                r["pg_rebuild_vs_sqlite_time_ratio"] = round(s / sqlite, 3)
            }
        }
        // The webhook against the Python peer receiver, at each connection count both measured.
        for c in [1, 16, 64] {
            if let ours = number("webhook_c\(c)_notifications_per_s"), let peer = number("peer_server_c\(c)_notifications_per_s"), peer > 0 {
                r["webhook_vs_peer_server_c\(c)_ratio"] = round(ours / peer, 2)
            }
        }
        // Issue 25: the ratio of two PostgreSQL workers to one, as a fraction of what this machine
        // allows (its cores over the cores one worker's run kept busy).
        if let ratio = number("pg_ingest_2_vs_1_ratio"), let ceiling = number("pg_ingest_2_vs_1_ceiling"), ceiling > 0 {
            r["pg_ingest_2_vs_1_of_ceiling"] = round(ratio / ceiling, 3)
        }
        if let m = number("group_show_inprocess_median_ms") { r["group_show_median_ms"] = m }
        if let p = number("group_show_inprocess_p99_ms") { r["group_show_p99_ms"] = p }

        var targetResults: [String: Any] = [:]
        for target in targets {
            let pass = target.check(number(target.key))
            targetResults[target.key] = ["target": "\(target.op) \(format(target.bound))", "value": r[target.key] ?? NSNull(),
                                         "pass": pass.map { $0 as Any } ?? NSNull()]
        }
        r["targets"] = targetResults

        let data = try JSONSerialization.data(withJSONObject: r, options: [.sortedKeys, .prettyPrinted])
        try data.write(to: URL(fileURLWithPath: out))
        print(table(r, number: number))
    }

    static func format(_ value: Double) -> String {
        if value.isNaN { return "—" }
        if abs(value) >= 100 || (value == value.rounded() && abs(value) < 1e15) {
            let formatter = NumberFormatter()
            formatter.numberStyle = .decimal
            formatter.maximumFractionDigits = 0
            return formatter.string(from: NSNumber(value: value.rounded())) ?? String(Int(value))
        }
        if abs(value) >= 10 { return String(format: "%.1f", value) }
        return String(format: "%.2f", value)
    }

    static func table(_ r: [String: Any], number: (String) -> Double?) -> String {
        func v(_ key: String, scale: Double = 1, suffix: String = "") -> String {
            guard let n = number(key) else { return "—" }
            return format(n * scale) + suffix
        }
        func mark(_ key: String) -> String {
            guard let target = targets.first(where: { $0.key == key }) else { return "" }
            let bound = target.key == "fraction_of_verify_bound" ? "\(target.op) 50%" : "\(target.op) \(format(target.bound))"
            switch target.check(number(key)) {
            case .some(true): return "\(bound)  PASS"
            case .some(false): return "\(bound)  FAIL"
            case .none: return "\(bound)  n/a"
            }
        }
        func text(_ key: String) -> String { (r[key] as? String) ?? "" }
        var rows: [(String, String, String, String)] = []
        rows.append(("1 ingest", "notifications/s (init + ingest, WAL, FULL)", v("ingest_notifications_per_s"), mark("ingest_notifications_per_s")))
        rows.append(("", "  \(v("ingest_notifications")) notifications, \(v("ingest_groups")) groups, \(v("ingest_seconds")) s, peak RSS \(v("ingest_peak_rss_mb")) MB", "", ""))
        let peerStatus = text("peer_status")
        rows.append(("2 peer", "Apple app-store-server-library, notifications/s", v("peer_notifications_per_s"), peerStatus == "ok" ? "" : peerStatus))
        if number("peer_notifications") != nil {
            rows.append(("", "  \(text("peer_library")), Python \(text("peer_python")), 1 process, sample \(v("peer_notifications"))", "", ""))
        }
        if let tools = r["peer_toolspki_status"] as? String {
            rows.append(("", "  same library on a Tools/pki-signed stream: \(tools == "ok" ? "accepted" : tools)", "", ""))
        }
        rows.append(("", "ratio ours / peer", v("ratio_vs_peer", suffix: "×"), mark("ratio_vs_peer")))
        rows.append(("1c webhook", "serve, notifications/s over 1 / 16 / 64 connections",
                     "\(v("webhook_c1_notifications_per_s")) / \(v("webhook_c16_notifications_per_s")) / \(v("webhook_c64_notifications_per_s"))",
                     "file ingest \(v("webhook_file_ingest_notifications_per_s"))/s"))
        rows.append(("", "ratio to file ingest at 64 connections (1: \(v("webhook_c1_vs_file_ratio")), 16: \(v("webhook_c16_vs_file_ratio")))",
                     v("webhook_c64_vs_file_ratio"), mark("webhook_c64_vs_file_ratio")))
        rows.append(("", "  p50 / p99 ms: 1 conn \(v("webhook_c1_p50_ms")) / \(v("webhook_c1_p99_ms")), 16: \(v("webhook_c16_p50_ms")) / \(v("webhook_c16_p99_ms")), 64: \(v("webhook_c64_p50_ms")) / \(v("webhook_c64_p99_ms")); serve peak RSS \(v("webhook_c1_peak_rss_mb")) / \(v("webhook_c16_peak_rss_mb")) / \(v("webhook_c64_peak_rss_mb")) MB, CPU µs a notification \(v("webhook_c1_serve_cpu_us_per_notification")) / \(v("webhook_c16_serve_cpu_us_per_notification")) / \(v("webhook_c64_serve_cpu_us_per_notification"))", "", ""))
        rows.append(("1d latency", "ack p50 / p99 ms, \(v("latency_offered_per_s"))/s offered for \(v("latency_seconds")) s (open loop)",
                     "\(v("latency_p50_ms")) / \(v("latency_p99_ms"))", mark("latency_p99_ms")))
        rows.append(("", "  achieved \(v("latency_achieved_per_s"))/s, p99.9 \(v("latency_p999_ms")) ms, max \(v("latency_max_ms")) ms, latest send \(v("latency_max_send_lag_ms")) ms late; serve peak RSS \(v("latency_peak_rss_mb")) MB; load \(text("latency_load_average"))", "", ""))
        let peerServer = text("peer_server_status")
        rows.append(("2b peer srv", "Python receiver, notifications/s over \(number("peer_server_c1_notifications_per_s") == nil ? "64" : "1 / 16 / 64") connections",
                     number("peer_server_c1_notifications_per_s") == nil ? v("peer_server_c64_notifications_per_s")
                        : "\(v("peer_server_c1_notifications_per_s")) / \(v("peer_server_c16_notifications_per_s")) / \(v("peer_server_c64_notifications_per_s"))",
                     peerServer == "ok" ? "" : peerServer))
        if number("peer_server_workers") != nil {
            rows.append(("", "  \(text("peer_server_stack")), \(v("peer_server_workers")) workers, \(v("peer_server_notifications")) notifications; peak RSS of all workers \(v("peer_server_c64_peak_rss_mb")) MB at 64", "", ""))
        }
        rows.append(("", "ratio webhook / peer receiver at 64 connections (1: \(v("webhook_vs_peer_server_c1_ratio"))×, 16: \(v("webhook_vs_peer_server_c16_ratio"))×)",
                     v("webhook_vs_peer_server_c64_ratio", suffix: "×"), mark("webhook_vs_peer_server_c64_ratio")))
        rows.append(("3 limits", "ES256 verifies/s, all \(v("es256_threads")) cores (1 core: \(v("es256_verifies_per_s_one_core")))", v("es256_verifies_per_s"), ""))
        rows.append(("", "fraction of the verify bound (3 JWS/notification)", v("fraction_of_verify_bound", scale: 100, suffix: "%"), mark("fraction_of_verify_bound")))
        rows.append(("", "SeatLedger's whole JWS check/s, all cores (key table, caches)", v("jws_verifies_per_s"), ""))
        rows.append(("", "fraction of that bound (3 JWS/notification)", v("fraction_of_jws_bound", scale: 100, suffix: "%"), ""))
        rows.append(("", "SQLite inserts/s (raw lines, 1000-row tx, WAL, FULL)", v("sqlite_inserts_per_s"), "(\(v("sqlite_mb_per_s")) MB/s)"))
        rows.append(("4 rebuild", "events/s (\(v("rebuild_events")) events, \(v("rebuild_groups")) groups, from the log)", v("rebuild_events_per_s"), mark("rebuild_events_per_s")))
        rows.append(("", "peak RSS MB", v("rebuild_peak_rss_mb"), mark("rebuild_peak_rss_mb")))
        rows.append(("", "  cold, seconds a step: facts \(v("rebuild_step_deriving_facts_seconds")), identity \(v("rebuild_step_resolving_identities_seconds")), index \(v("rebuild_step_writing_the_group_index_seconds")), snapshots \(v("rebuild_step_folding_group_snapshots_seconds")), commit \(v("rebuild_step_committing_seconds"))", "", ""))
        rows.append(("", "events/s again, facts cached (warm)", v("rebuild_warm_events_per_s"), "RSS \(v("rebuild_warm_peak_rss_mb")) MB"))
        rows.append(("", "  warm, seconds a step: identity \(v("rebuild_warm_step_resolving_identities_seconds")), index compared \(v("rebuild_warm_step_comparing_the_group_index_seconds")), snapshots \(v("rebuild_warm_step_folding_group_snapshots_seconds"))", "", ""))
        rows.append(("4b floor", "SQLite alone writing the rebuild's output, events/s: cold / warm",
                     "\(v("rebuild_floor_cold_events_per_s")) / \(v("rebuild_floor_warm_events_per_s"))",
                     "rebuild takes \(v("rebuild_vs_floor_time_ratio"))× (cold, no target) / \(v("rebuild_warm_vs_floor_time_ratio"))× the floor"))
        rows.append(("", "warm rebuild's time over its floor", v("rebuild_warm_vs_floor_time_ratio", suffix: "×"), mark("rebuild_warm_vs_floor_time_ratio")))
        rows.append(("", "  no computation: facts \(v("rebuild_floor_write_facts_seconds")) s + projections \(v("rebuild_floor_write_projections_seconds")) s (\(v("rebuild_floor_index_rows")) index rows); reads (other core) \(v("rebuild_floor_read_decoded_seconds")) / \(v("rebuild_floor_read_facts_seconds")) s", "", ""))
        rows.append(("5 read", "group show in-process median / p99 ms (\(v("group_show_inprocess_samples")) groups)", "\(v("group_show_inprocess_median_ms")) / \(v("group_show_inprocess_p99_ms"))", mark("group_show_median_ms")))
        rows.append(("", "group show CLI median / p99 ms (\(v("group_show_cli_samples")) runs)", "\(v("group_show_cli_median_ms")) / \(v("group_show_cli_p99_ms"))", "process start \(v("cli_startup_median_ms")) ms"))
        rows.append(("5b read API", "GET /v1/members/{id}, 16 connections, requests/s", v("members_get_per_s"), mark("members_get_per_s")))
        rows.append(("", "  p50 / p99 ms (\(v("members_get_ids")) sampled ids, \(v("members_get_ledger_events")) events)",
                     "\(v("members_get_p50_ms")) / \(v("members_get_p99_ms"))", mark("members_get_p99_ms")))
        rows.append(("", "GET /v1/entitlements/{id}, same ids, requests/s (× members, median of 3 alternating pairs: \(text("entitlements_vs_members_get_pair_ratios")))",
                     "\(v("entitlements_get_per_s")) (\(v("entitlements_vs_members_get_ratio"))×)", mark("entitlements_vs_members_get_ratio")))
        rows.append(("", "  p50 / p99 ms, CPU \(v("entitlements_get_serve_cpu_us_per_request")) µs a request",
                     "\(v("entitlements_get_p50_ms")) / \(v("entitlements_get_p99_ms"))", mark("entitlements_get_p99_ms")))
        rows.append(("", "  serve peak RSS \(v("members_get_peak_rss_mb")) MB, CPU \(v("members_get_serve_cpu_us_per_request")) µs a request (\(v("members_get_serve_busy_cores")) cores), \(v("members_get_avg_body_bytes")) bytes an answer; load \(text("members_get_load_average"))", "", ""))
        if number("deployment_entitlements_ratio") != nil || number("deployment_webhook_ratio") != nil {
            rows.append(("7 ledgers", "GET /v1/entitlements/{id}, \(v("deployment_ledgers")) ledgers of \(v("deployment_events_per_ledger")) events searched, requests/s (× one ledger, median of 3 alternating pairs: \(text("deployment_entitlements_pair_ratios")))",
                         "\(v("deployment_entitlements_all_per_s")) (\(v("deployment_entitlements_ratio"))×)", mark("deployment_entitlements_ratio")))
            rows.append(("", "  one ledger \(v("deployment_entitlements_one_per_s"))/s; p99 \(v("deployment_entitlements_all_p99_ms")) / \(v("deployment_entitlements_one_p99_ms")) ms; serve peak RSS \(v("deployment_read_all_peak_rss_mb")) / \(v("deployment_read_one_peak_rss_mb")) MB", "", ""))
            rows.append(("", "webhook, 64 connections, \(v("deployment_webhook_notifications")) notifications spread over \(v("deployment_ledgers")) ledgers, notifications/s (× one ledger)",
                         "\(v("deployment_webhook_all_per_s")) (\(v("deployment_webhook_ratio"))×)", mark("deployment_webhook_ratio")))
            rows.append(("", "  one ledger \(v("deployment_webhook_one_per_s"))/s; serve peak RSS \(v("deployment_webhook_all_peak_rss_mb")) / \(v("deployment_webhook_one_peak_rss_mb")) MB", "", ""))
        }
        let groupsSizes = text("groups_json_sizes").split(separator: " ").map(String.init)
        if let largest = groupsSizes.last {
            rows.append(("5c groups", "groups --json over \(largest) groups, seconds", v("groups_json_\(largest)_seconds"),
                         largest == "100000" ? mark("groups_json_100000_seconds") : "RSS \(v("groups_json_\(largest)_peak_rss_mb")) MB"))
            rows.append(("", "  seconds per 1,000 groups at " + groupsSizes.joined(separator: " / "),
                         groupsSizes.map { v("groups_json_seconds_per_1000_at_\($0)") }.joined(separator: " / "),
                         "growth \(v("groups_json_per_1000_growth"))×  \(mark("groups_json_per_1000_growth"))"))
        }
        rows.append(("6 postgres", "ingest notifications/s, 1 worker", v("pg_ingest_1_worker_notifications_per_s"), text("pg_status") == "ok" ? "" : text("pg_status")))
        rows.append(("", "ingest notifications/s, 2 workers (ratio to 1)", "\(v("pg_ingest_2_workers_notifications_per_s")) (\(v("pg_ingest_2_vs_1_ratio"))×)", mark("pg_ingest_2_vs_1_ratio")))
        rows.append(("", "cores busy, 1 / 2 workers (machine-wide); ceiling of the ratio", "\(v("pg_ingest_1_worker_busy_cores")) / \(v("pg_ingest_2_workers_busy_cores"))",
                     "ceiling \(v("pg_ingest_2_vs_1_ceiling"))× = \(v("cores")) cores / \(v("pg_ingest_1_worker_busy_cores")); \(v("pg_ingest_2_vs_1_of_ceiling", scale: 100, suffix: "%")) of it  \(mark("pg_ingest_2_vs_1_of_ceiling"))"))
        rows.append(("", "rebuild events/s, PostgreSQL / SQLite, same ledger", "\(v("pg_rebuild_events_per_s")) / \(v("sqlite_rebuild_same_events_per_s"))", "time ratio \(v("pg_rebuild_vs_sqlite_time_ratio"))  \(mark("pg_rebuild_vs_sqlite_time_ratio"))"))
        if number("access_intake_ratio") != nil || number("access_webhook_delivered") != nil || number("lapses_groups") != nil {
            rows.append(("8 access", "webhook intake, 64 connections, notifications/s: access changes on / off (median of \(v("access_pairs")) alternating pairs: \(text("access_intake_pair_ratios")))",
                         "\(v("access_on_c64_notifications_per_s")) / \(v("access_off_c64_notifications_per_s")) (\(v("access_intake_ratio"))×)", mark("access_intake_ratio")))
            rows.append(("", "  derivation caught up \(v("access_on_derivation_lag_s")) s after the last 200 (\(v("access_on_transitions")) transitions); serve CPU µs a notification on / off \(v("access_on_serve_cpu_us_per_notification")) / \(v("access_off_serve_cpu_us_per_notification")) (on, intake only: \(v("access_on_intake_serve_cpu_us_per_notification")))", "", ""))
            rows.append(("", "notification 200 → webhook received, p50 / p99 ms (\(v("access_webhook_offered_per_s"))/s for \(v("access_webhook_seconds")) s)",
                         "\(v("access_webhook_p50_ms")) / \(v("access_webhook_p99_ms"))", mark("access_webhook_p99_ms")))
            rows.append(("", "  max \(v("access_webhook_max_ms")) ms; delivered \(v("access_webhook_delivered")) of \(v("access_webhook_transitions")) transitions; post to receiver p50 / p99 \(v("access_webhook_attempt_p50_ms")) / \(v("access_webhook_attempt_p99_ms")) ms, receiver CPU \(v("access_webhook_receiver_cpu_ms_per_delivery")) ms a delivery", "", ""))
            rows.append(("", "\(v("lapses_groups")) groups ending in one minute: every lapse derived, seconds", v("lapses_seconds"), mark("lapses_seconds")))
            rows.append(("", "  \(v("lapses_emitted")) lapses, \(v("lapses_per_s"))/s, \(v("lapses_derivations")) transactions; the purchases first \(v("lapses_initial_derive_seconds")) s; peak RSS \(v("lapses_peak_rss_mb")) MB", "", ""))
        }
        // Rows with an empty value column are notes: they do not widen the columns.
        let measured = rows.filter { !$0.2.isEmpty }
        let widths = (0..<3).map { column in measured.map { [$0.0, $0.1, $0.2][column].count }.max() ?? 0 }
        var lines: [String] = []
        lines.append("SeatLedger benchmark — \(text("mode")) — \(text("machine")), load \(text("load_average_at_start")) — \(text("date")) — \(text("git_head"))")
        for row in rows {
            let first = row.0.padding(toLength: widths[0], withPad: " ", startingAt: 0)
            let second = row.1.padding(toLength: widths[1], withPad: " ", startingAt: 0)
            let value = String(repeating: " ", count: max(0, widths[2] - row.2.count)) + row.2
            var line = row.2.isEmpty && row.3.isEmpty ? "\(first)  \(row.1)" : "\(first)  \(second)  \(value)  \(row.3)"
            while line.last == " " { line.removeLast() }
            lines.append(line)
        }
        let passed = targets.filter { $0.check(number($0.key)) == true }.count
        let checked = targets.filter { $0.check(number($0.key)) != nil }.count
        lines.append("targets met: \(passed) of \(checked) measured (of \(targets.count))")
        for key in ["ingest_status", "rebuild_status", "rebuild_warm_status", "group_show_status", "webhook_status", "peer_server_status",
                    "members_get_status", "entitlements_get_status", "access_webhook_status", "access_intake_problems", "broken"] {
            if let status = r[key] as? String, status != "ok" { lines.append("\(key): \(status)") }
        }
        return lines.joined(separator: "\n")
    }
}
