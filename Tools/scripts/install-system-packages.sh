#!/usr/bin/env bash
# Installs the Debian packages of Tools/system-packages.txt that this machine lacks.
#   install-system-packages.sh build   packages needed to compile (make demo)
#   install-system-packages.sh deb     those and the ones the Debian package's build needs (make deb)
#   install-system-packages.sh test    all of them: the test suite also builds and tests the package (make test, .ci/run)
# Says what it installs; does nothing (and says nothing) when everything is there. Uses apt-get as
# root, else through `sudo -n`; otherwise prints the command to run and exits 1.
set -euo pipefail
phase="${1:-build}"
case "$phase" in build|deb|test) ;; *) echo "usage: $0 build|deb|test" >&2; exit 2 ;; esac
list="$(dirname "$0")/../system-packages.txt"

wanted=()
while read -r name package_phase _; do
  case "$name" in ''|'#'*) continue ;; esac
  if [ "$package_phase" = build ] || [ "$phase" = test ] || [ "$package_phase" = "$phase" ]; then wanted+=("$name"); fi
done < "$list"

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "install-system-packages: not a Debian system; make sure these (or their equivalents) are installed: ${wanted[*]}" >&2
  exit 0
fi

missing=()
for package in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ "${#missing[@]}" -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  run=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  run=(sudo -n)
else
  echo "install-system-packages: missing Debian packages: ${missing[*]}" >&2
  echo "install them as root: apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "== installing Debian packages: ${missing[*]} (listed in Tools/system-packages.txt)"
export DEBIAN_FRONTEND=noninteractive
"${run[@]}" apt-get update -qq
"${run[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "== installed: ${missing[*]}"
