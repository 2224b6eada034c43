import AppStoreModels
import Projections
import Reports

/// The frame of every desk page: the search bar on top, the report style sheet plus the desk's
/// own few rules, no script and no external asset (a page saved from the browser works offline).
enum DeskLayout {
    static let style = """
    header.desk{display:flex;flex-wrap:wrap;gap:.75rem 1.5rem;align-items:center;border-bottom:1px solid #ddd;padding-bottom:.9rem;margin-bottom:1rem}
    header.desk .brand{font-weight:700;color:#1d1d1f;text-decoration:none;font-size:1.05rem}
    form.search{display:flex;flex:1 1 28rem;gap:.5rem;flex-wrap:wrap;align-items:center}
    form.search label{position:absolute;left:-9999px}
    form.search input[type=search]{flex:1 1 16rem;min-width:0;font-size:1rem;padding:.45rem .6rem;border:1px solid #aaa;border-radius:6px}
    button{font-size:.95rem;padding:.45rem .9rem;border:1px solid #0a66c2;background:#0a66c2;color:#fff;border-radius:6px;cursor:pointer}
    form.clocks{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:flex-end;font-size:.85rem;margin:.5rem 0 1rem}
    form.clocks label{display:flex;flex-direction:column;gap:.2rem}form.clocks input{font-size:.9rem;padding:.3rem .4rem;border:1px solid #aaa;border-radius:4px;width:14rem;max-width:100%}
    form.clocks button{font-size:.85rem;padding:.35rem .8rem}
    .badge{display:inline-block;padding:.1rem .5rem;border-radius:999px;font-size:.8rem;font-weight:600;vertical-align:middle;background:#eee;color:#1d1d1f}
    .badge.yes{background:#e6f4ea;color:#0b6b2f}.badge.no{background:#fdecea;color:#b42318}
    .downloads{font-size:.9rem}.downloads a{margin-right:1rem}
    a{color:#0a66c2}dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem;font-size:.9rem}dl.facts dt{color:#6e6e73}dl.facts dd{margin:0;overflow-wrap:anywhere}
    ul.matches li{margin:.4rem 0}
    ol.answers{padding-left:1.4rem}ol.answers li{margin:.55rem 0;overflow-wrap:anywhere}.next{display:block;color:#1d1d1f;margin-top:.2rem}
    p.next{background:#fff8e1;border-left:4px solid #d97706;padding:.5rem .8rem}
    details.evidence{margin:1rem 0;border:1px solid #ddd;border-radius:6px;padding:.4rem .8rem}details.evidence summary{cursor:pointer;color:#0a66c2;font-weight:600}
    p.technical{font-size:.9rem;overflow-wrap:anywhere}p.note{background:#eef4fb;border-left:4px solid #0a66c2;padding:.5rem .8rem;overflow-wrap:anywhere}
    @media (max-width:640px){dl.facts{grid-template-columns:1fr}dl.facts dd{margin-bottom:.4rem}form.clocks label{flex:1 1 100%}form.clocks input{width:100%;box-sizing:border-box}}
    """

    /// A complete desk page.
    static func page(title: String, query: String = "", clocks: DeskClocks, body: String) -> String {
        AuditHTML.page(title: "\(title) — SeatLedger support desk", body: "<main>" + body + "</main>",
                       header: header(query: query, clocks: clocks), extraStyle: style)
    }

    /// The top bar: the desk's name (a link home) and the search box, carrying the page's clocks.
    static func header(query: String, clocks: DeskClocks) -> String {
        var html = "<header class=\"desk\"><a class=\"brand\" href=\"/\">SeatLedger support desk</a>"
        html += "<form class=\"search\" method=\"get\" action=\"/search\" role=\"search\">"
        html += "<label for=\"q\">Find a group or member</label>"
        html += "<input id=\"q\" name=\"q\" type=\"search\" value=\"\(e(query))\" required "
        html += "placeholder=\"transaction id, app transaction id, seat claim id, group id or member ref\" autocomplete=\"off\">"
        for parameter in clocks.parameters {
            html += "<input type=\"hidden\" name=\"\(e(parameter.name))\" value=\"\(e(parameter.value))\">"
        }
        html += "<button type=\"submit\">Search</button></form></header>"
        return html
    }

    /// The form that re-shows a page at other clocks (`asOf`, `knownAt`), keeping `name=value`.
    static func clockForm(action: String, name: String, value: String, clocks: DeskClocks) -> String {
        var html = "<form class=\"clocks\" method=\"get\" action=\"\(e(action))\"><input type=\"hidden\" name=\"\(e(name))\" value=\"\(e(value))\">"
        if let ledger = clocks.ledger { html += "<input type=\"hidden\" name=\"ledger\" value=\"\(e(ledger))\">" }
        html += "<label>As of (Apple's time)<input name=\"asOf\" value=\"\(e(clocks.asOf.map(Timestamp.iso8601) ?? ""))\" placeholder=\"now\"></label>"
        html += "<label>Known at (what the ledger had recorded)<input name=\"knownAt\" value=\"\(e(clocks.knownAt.map(Timestamp.iso8601) ?? ""))\" placeholder=\"everything recorded\"></label>"
        html += "<button type=\"submit\">Show</button></form>"
        html += "<p class=\"muted\">Shown \(e(clocks.description)).</p>"
        return html
    }

    /// `<a href="…">text</a>`, both escaped.
    static func link(_ href: String, _ text: String) -> String {
        "<a href=\"\(e(href))\">\(e(text))</a>"
    }

    /// The identifier that best opens a member's page: claim, transaction, app transaction, then memberRef.
    static func pageIdentifier(_ member: MemberState) -> String? {
        member.seatClaimId ?? member.originalTransactionId ?? member.appTransactionId ?? member.memberRef
    }

    static func e(_ text: String) -> String { AuditHTML.escape(text) }
    static func v(_ text: String) -> String { AuditHTML.escape(DisplayText.visible(text)) }
}
