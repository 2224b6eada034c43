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
# 1280x900 and 390x844 (a phone) into DIR. Stops serve at the end. Exits 1 naming the page and
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
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
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
  grep -q '<svg class="access-timeline"' "$work/$1.dom.html" || fail "$1" "no access timeline SVG"
  [ "$marks" -ge 1 ] || fail "$1" "the access timeline has no event marks"
  [ "$ticks" -gt 2 ] || fail "$1" "the time axis has $ticks labels (needs more than 2)"
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
has member "because the seat was refunded (SEAT_REFUND, event $unclaim" "the member's reason and its event"
has member "caused one level up by the purchaser's seat refund (SEAT_REFUND) on 2026-10-06T00:00:00.000Z, event $refund" "the cascaded purchaser event, its date and id"
timeline member

browse group "$base/group?ref=2000012000000001"
has group "SEAT_REFUND: seat refunded" "the reason of m5's loss"
has group "data-event-id=\"$unclaim\"" "the mark of the causing event"
has group "<code>$unclaim</code>" "the causing event id in the table"
has group "event $refund" "the purchaser's seat refund, one level up"
has group "Over capacity" "the seat counts"
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
