#!/usr/bin/env bash
# The support desk and the HTML report in a real browser (Debian's chromium, headless).
#
#   browser-check.sh [--bin PATH/TO/seatledger] [--out DIR]
#
# Builds seatledger when no --bin is given, makes the demo ledger (`seatledger demo --keep`),
# starts `serve --support-listen 127.0.0.1:0` on it (the port from the start line; readiness by
# polling /healthz), loads every desk page and an `audit --format html` report with
# `chromium --headless --dump-dom`, checks the DOM for the reason text and event ids (and that the
# access timeline has event marks and more than two axis labels), and saves screenshots at
# 1280x900 and 390x844 (a phone) into DIR. On the member and group pages of m5 (who lost access
# through a seat refund) a probe measures, at 390 and 1280 px, that m5's lost-access mark is drawn
# inside the screen, that no other mark of the timeline is off-screen, and that the page is no wider. Stops serve at the end. Exits 1 naming the page and
# what was missing; 2 when it cannot run (no chromium: `apt-get install chromium`, listed in
# Tools/system-packages.txt as a test package).
set -euo pipefail
cd "$(dirname "$0")/../.."

bin=""
out="${TMPDIR:-/tmp}/seatledger-browser-check"
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "browser-check: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
chromium="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
if [ -z "$chromium" ]; then
  echo "browser-check: no chromium on PATH; install it (apt-get install chromium) or set CHROMIUM" >&2
  exit 2
fi
if [ -z "$bin" ]; then
  swift build --product seatledger 2>&1 | tail -n 1
  bin="$(swift build --show-bin-path)/seatledger"
fi
[ -x "$bin" ] || { echo "browser-check: $bin is not an executable" >&2; exit 2; }

mkdir -p "$out"
work="$(mktemp -d "${TMPDIR:-/tmp}/seatledger-browser-check.XXXXXX")"
serve_pid=""
cleanup() {
  if [ -n "$serve_pid" ] && kill -0 "$serve_pid" 2>/dev/null; then
    kill -TERM "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

failures=0
fail() { echo "FAIL $1: $2" >&2; failures=$((failures + 1)); }

# Clocks pinned, so every run shows the same pages.
export SEATLEDGER_NOW="2026-11-16T00:00:00Z"
echo "== demo ledger"
"$bin" demo --keep "$work/demo.sqlite" > "$work/demo.txt"
"$bin" audit group 2000012000000001 --db "$work/demo.sqlite" --format html --out "$work/audit-group.html" 2> "$work/audit.log"
"$bin" audit member 67d24449-9711-4d5e-8026-b897db5f8506 --db "$work/demo.sqlite" --format html --out "$work/audit-member.html" 2>> "$work/audit.log"

echo "== serve --support-listen"
"$bin" serve --db "$work/demo.sqlite" --listen 127.0.0.1:0 --support-listen 127.0.0.1:0 2> "$work/serve.log" &
serve_pid=$!
healthy() {  # healthy PORT: the desk answers GET /healthz with 200 (bash's /dev/tcp: no curl needed)
  local status
  { exec 3<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1
  printf 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3
  status="$(head -n 1 <&3 || true)"
  exec 3<&- 3>&-
  case "$status" in "HTTP/1.1 200"*) return 0 ;; *) return 1 ;; esac
}
port=""
for _ in $(seq 1 300); do
  port="$(grep -o '"supportAddress":"127.0.0.1:[0-9]*"' "$work/serve.log" 2>/dev/null | head -n 1 | sed 's/.*://; s/"//')" || true
  if [ -n "$port" ] && healthy "$port"; then break; fi
  kill -0 "$serve_pid" 2>/dev/null || { echo "browser-check: serve exited: $(cat "$work/serve.log")" >&2; exit 2; }
  port=""
  sleep 0.1
done
[ -n "$port" ] || { echo "browser-check: the support desk never answered /healthz: $(cat "$work/serve.log")" >&2; exit 2; }
base="http://127.0.0.1:$port"
echo "   desk at $base"

browse() {  # browse NAME URL: the DOM into $work/NAME.dom.html, screenshots into $out
  local name="$1" url="$2" profile="$work/profile-$1"
  local flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --no-default-browser-check
               --disable-extensions --disable-background-networking --user-data-dir="$profile")
  timeout 120 "$chromium" "${flags[@]}" --dump-dom "$url" > "$work/$name.dom.html" 2> "$work/$name.chromium.log" \
    || fail "$name" "chromium could not load $url: $(tail -n 3 "$work/$name.chromium.log")"
  for size in 1280,900 390,844; do
    timeout 120 "$chromium" "${flags[@]}" --window-size="$size" --screenshot="$out/$name-${size/,/x}.png" "$url" \
      > /dev/null 2>> "$work/$name.chromium.log" || fail "$name" "no screenshot at $size"
    [ -s "$out/$name-${size/,/x}.png" ] || fail "$name" "the screenshot at $size is empty"
  done
}
has() {  # has NAME TEXT WHAT: the DOM of NAME contains TEXT
  grep -qF -- "$2" "$work/$1.dom.html" || fail "$1" "the page lacks $3 ($2)"
}
timeline() {  # timeline NAME: an access timeline with at least one event mark and more than two axis labels
  local marks ticks
  marks="$({ grep -o 'class="mark mark-' "$work/$1.dom.html" || true; } | wc -l)"
  ticks="$({ grep -o 'class="tick"' "$work/$1.dom.html" || true; } | wc -l)"
  grep -q '<svg class="access-timeline' "$work/$1.dom.html" || fail "$1" "no access timeline SVG"
  [ "$marks" -ge 1 ] || fail "$1" "the access timeline has no event marks"
  [ "$ticks" -gt 2 ] || fail "$1" "the time axis has $ticks labels (needs more than 2)"
}
inside_viewport() {  # inside_viewport NAME EVENT_ID WIDTH: in a WIDTH px wide screen the lost-access mark of EVENT_ID is drawn inside it
  # The desk forbids scripts (CSP), and headless chromium will not make a window narrower than
  # 500 px; so the page's DOM goes into an iframe WIDTH px wide (srcdoc) of a probe page whose
  # script measures the mark the page shows (getBoundingClientRect) and writes the numbers into
  # the DOM that chromium dumps.
  local name="$1" id="$2" width="$3" probe="$work/$1-probe-$3.html" profile="$work/profile-$1-probe"
  {
    printf '<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{margin:0}iframe{border:0;display:block}</style></head><body>'
    printf '<iframe id="page" width="%s" height="844" srcdoc="' "$width"
    sed 's/&/\&amp;/g; s/"/\&quot;/g' "$work/$name.dom.html"
    cat <<PROBE
"></iframe>
<script>
window.addEventListener('load', function () {
  var d = document.getElementById('page').contentDocument, w = d.documentElement.clientWidth;
  var shown = [].slice.call(d.querySelectorAll('svg.access-timeline .mark-lost[data-event-id="$id"]'))
    .map(function (m) { return m.getBoundingClientRect(); }).filter(function (r) { return r.width > 0 && r.height > 0; });
  var off = [].slice.call(d.querySelectorAll('svg.access-timeline .mark')).map(function (m) { return m.getBoundingClientRect(); })
    .filter(function (r) { return r.width > 0 && (r.left < 0 || r.right > w); }).length;
  var p = document.createElement('pre'); p.id = 'probe';
  p.textContent = 'probe viewport=' + w + ' page=' + d.documentElement.scrollWidth + ' offscreen=' + off + ' shown=' + shown.length
    + (shown.length ? ' left=' + Math.floor(shown[0].left) + ' right=' + Math.ceil(shown[0].right) : '') + ' end';
  document.body.appendChild(p);
});
</script></body></html>
PROBE
  } > "$probe"
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --no-default-browser-check \
    --disable-extensions --disable-background-networking --user-data-dir="$profile" --window-size=1280,900 --virtual-time-budget=5000 \
    --dump-dom "file://$probe" > "$work/$name-probe-$width.dom.html" 2>> "$work/$name.chromium.log" || fail "$name" "chromium could not run the probe"
  local line viewport page shown left right
  line="$(grep -o 'probe viewport=[0-9]* page=[0-9]* offscreen=[0-9]* shown=[0-9]*\( left=-\{0,1\}[0-9]* right=-\{0,1\}[0-9]*\)\{0,1\} end' "$work/$name-probe-$width.dom.html" || true)"
  [ -n "$line" ] || { fail "$name" "the probe at $width px wrote nothing"; return; }
  echo "   $name at $width px: $line"
  viewport="$(sed 's/.*viewport=\([0-9]*\).*/\1/' <<< "$line")"; page="$(sed 's/.* page=\([0-9]*\).*/\1/' <<< "$line")"
  shown="$(sed 's/.* shown=\([0-9]*\).*/\1/' <<< "$line")"
  [ "$shown" -ge 1 ] || { fail "$name" "at $width px no lost-access mark of event $id is drawn"; return; }
  left="$(sed 's/.* left=\(-\{0,1\}[0-9]*\).*/\1/' <<< "$line")"; right="$(sed 's/.* right=\(-\{0,1\}[0-9]*\).*/\1/' <<< "$line")"
  [ "$left" -ge 0 ] && [ "$right" -le "$viewport" ] || fail "$name" "at $width px the lost-access mark of event $id is off-screen ($left..$right of $viewport)"
  [ "$page" -le "$viewport" ] || fail "$name" "at $width px the page is $page px wide, wider than the screen ($viewport)"
  [ "$(sed 's/.* offscreen=\([0-9]*\).*/\1/' <<< "$line")" -eq 0 ] || fail "$name" "at $width px some timeline marks are off-screen: $line"
}
self_contained() {  # self_contained NAME: nothing loaded from elsewhere
  if grep -qiE 'src="https?:|href="https?:|@import|url\(https?:|<script|<link ' "$work/$1.dom.html"; then
    fail "$1" "the page refers to an outside resource or a script"
  fi
}

claim="67d24449-9711-4d5e-8026-b897db5f8506"
unclaim="bbf1af93-82f7-4391-a84c-65c9aab6d78e"
refund="24bfabe7-065d-4f2a-8a27-84f439874bd5"

echo "== pages"
browse home "$base/"
has home 'name="q"' "the search box"

browse search-claim "$base/search?q=$claim"
has search-claim "(not) have access?" "the member page the seat claim id leads to"

browse member "$base/member?id=$claim"
has member "m5 lost access on 6 Oct 2026, 00:01 UTC because the group" "the plain verdict"
has member "Next step:" "a next step"
has member "because the seat was refunded (SEAT_REFUND, event $unclaim" "the member's reason and its event (the evidence)"
has member "caused one level up by the purchaser's seat refund (SEAT_REFUND) on 2026-10-06T00:00:00.000Z, event $refund" "the cascaded purchaser event, its date and id"
timeline member
inside_viewport member "$unclaim" 390
inside_viewport member "$unclaim" 1280

browse group "$base/group?ref=2000012000000001"
has group "SEAT_REFUND: seat refunded" "the reason of m5's loss"
has group "data-event-id=\"$unclaim\"" "the mark of the causing event"
has group "<code>$unclaim</code>" "the causing event id in the table"
has group "event $refund" "the purchaser's seat refund, one level up"
has group "Over capacity" "the seat counts"
inside_viewport group "$unclaim" 390
inside_viewport group "$unclaim" 1280
has group "Replay" "the replay"
timeline group

browse search-group "$base/search?q=810000000010000001"
has search-group "Group 2000001000000001" "the group page a group id leads to"
timeline search-group

browse matches "$base/search?q=m1"
has matches "matches for m1" "the list of groups m1 is in"

browse not-found "$base/search?q=no-such-customer"
has not-found "no group or member matches no-such-customer" "the not-found message"

browse audit-group "file://$work/audit-group.html"
has audit-group "data-event-id=\"$unclaim\"" "the causing event in the report's timeline"
timeline audit-group

browse audit-member "file://$work/audit-member.html"
has audit-member "event $refund" "the cascaded purchaser event in the member report"
timeline audit-member

for name in home search-claim member group search-group matches not-found audit-group audit-member; do self_contained "$name"; done

if [ "$failures" -gt 0 ]; then
  echo "browser-check: $failures check(s) failed; screenshots in $out" >&2
  exit 1
fi
echo "browser-check: all pages passed; screenshots in $out"
