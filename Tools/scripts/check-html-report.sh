#!/usr/bin/env bash
# Opens an HTML audit report in a real headless Chromium (Debian `chromium`), takes a screenshot,
# and fails if the browser logged a console error or tried to load anything from the network.
# Usage: Tools/scripts/check-html-report.sh [REPORT.html] [SCREENSHOT.png]
# Without REPORT, builds one from the demo streams (`seatledger demo --keep` + `audit group --format html`).
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v chromium >/dev/null || { echo "check-html-report: install Debian's chromium first (apt-get install chromium)" >&2; exit 2; }
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
report="${1:-}"
shot="${2:-$work/report.png}"
if [ -z "$report" ]; then
  bin="$(swift build --show-bin-path)/seatledger"
  [ -x "$bin" ] || swift build --product seatledger >/dev/null
  "$bin" demo --keep "$work/demo.sqlite" >/dev/null
  "$bin" audit group 2000010000000001 --db "$work/demo.sqlite" --format html --out "$work/report.html" 2>/dev/null
  report="$work/report.html"
fi
log="$work/chromium.log"
# --enable-logging=stderr --v=0 prints console messages as "CONSOLE(...)" lines.
chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,2000 \
  --enable-logging=stderr --v=0 --screenshot="$shot" "file://$(realpath "$report")" >"$log" 2>&1 || true
[ -s "$shot" ] || { echo "check-html-report: no screenshot produced"; cat "$log"; exit 1; }
if grep -E "CONSOLE|Uncaught|net::ERR_" "$log" | grep -v "ERR_.*file://" >/dev/null; then
  echo "check-html-report: console errors or network requests:"; grep -E "CONSOLE|Uncaught|net::ERR_" "$log"; exit 1
fi
echo "check-html-report: rendered $(realpath "$report") without console errors; screenshot $shot ($(stat -c %s "$shot") bytes)"
