#!/usr/bin/env bash
# Installs the Debian package into a bare Debian bookworm root and checks it there.
#
#   Tools/scripts/test-deb.sh PACKAGE.deb [--keep DIR]
#
# The root is made by mmdebstrap from Debian's own packages (variant apt: essential packages and
# apt, no Swift toolchain, none of the libraries SeatLedger links), plus what the container recipe
# (Tools/deploy/container/Dockerfile) adds. Inside it (chroot), it checks:
#   1. `apt-get install ./PACKAGE.deb` resolves Depends from Debian alone (not from this machine);
#   2. there is no Swift toolchain, and the binary needs no library the root lacks (ldd);
#   3. `seatledger --version`, the package's version and `serve`'s start line agree;
#   4. the system user, its data directory, the unit, the completions and the man page;
#   5. `seatledger demo` runs, as the seatledger user with its ledger in /var/lib/seatledger;
#   6. `seatledger serve` answers /healthz (with the version and commit) and /metrics
#      (seatledger_build_info), with the Dockerfile's ENV and its HEALTHCHECK command as written;
#      SIGTERM stops it with exit 0;
#   7. `apt-get purge` removes the package, /etc/seatledger and the user, keeps /var/lib/seatledger
#      and says so.
# Then `systemd-analyze verify` on the packaged unit. Needs root, mmdebstrap and systemd-analyze.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO="$PWD"
deb="${1:?usage: test-deb.sh PACKAGE.deb [--keep DIR]}"
keep=""
[ "${2:-}" = --keep ] && keep="${3:?--keep needs a directory}"
deb="$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")"
[ -f "$deb" ] || { echo "test-deb: no file $deb" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "test-deb: needs root (mmdebstrap --mode=root, chroot)" >&2; exit 1; }
command -v mmdebstrap >/dev/null || { echo "test-deb: mmdebstrap is missing (apt-get install mmdebstrap)" >&2; exit 1; }

dockerfile="$REPO/Tools/deploy/container/Dockerfile"
# What the container adds to bookworm-slim, and how it runs: read from the Dockerfile itself.
container_packages="$(sed -n 's/^# test-deb: packages: //p' "$dockerfile")"
container_env="$(sed -n 's/^ENV //p' "$dockerfile")"
healthcheck="$(sed -n 's/^HEALTHCHECK .*CMD //p' "$dockerfile")"
[ -n "$healthcheck" ] && [ -n "$container_env" ] || { echo "test-deb: cannot read ENV and HEALTHCHECK from $dockerfile" >&2; exit 1; }

work="$(mktemp -d)"
root="${keep:-$work/root}"
cleanup() {
  for mount in proc sys dev/pts dev; do umount -l "$root/$mount" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

echo "== mmdebstrap: a bare bookworm root (variant apt${container_packages:+, plus $container_packages})"
rm -rf "$root"
include=()
[ -n "$container_packages" ] && include=(--include="${container_packages// /,}")
mmdebstrap --quiet --variant=apt --mode=root --aptopt='Acquire::Retries "3"' "${include[@]}" bookworm "$root" \
  "deb http://deb.debian.org/debian bookworm main" "deb http://deb.debian.org/debian bookworm-updates main" \
  "deb http://deb.debian.org/debian-security bookworm-security main"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"

cp "$deb" "$root/tmp/"
free_port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
cat > "$root/tmp/check.sh" <<CHECK
#!/bin/bash
set -euo pipefail
fail() { echo "test-deb: FAIL: \$*" >&2; exit 1; }
deb=/tmp/$(basename "$deb")
export DEBIAN_FRONTEND=noninteractive

echo "-- 1. apt-get install \$deb (Depends resolved from Debian)"
! dpkg -s libsqlite3-0 >/dev/null 2>&1 || fail "the bare root already has libsqlite3-0: Depends would not be tested"
apt-get update -qq
apt-get install -y -qq --no-install-recommends "\$deb" > /tmp/install.log 2>&1 || { cat /tmp/install.log; fail "apt-get install"; }
grep -q "Next: as the seatledger user" /tmp/install.log || fail "postinst printed no next steps"

echo "-- 2. no Swift toolchain; every shared library found"
! command -v swift >/dev/null && [ ! -e /opt/swift ] || fail "a Swift toolchain is present"
ldd /usr/bin/seatledger > /tmp/ldd.txt
! grep -q "not found" /tmp/ldd.txt || { cat /tmp/ldd.txt; fail "missing shared libraries"; }
! grep -Eq "libswift|libFoundation" /tmp/ldd.txt || fail "the Swift runtime is linked dynamically"

echo "-- 3. versions agree"
seatledger --version
package_version="\$(dpkg-query -W -f='\${Version}' seatledger)"
seatledger --version > /tmp/version.txt
head -n 1 /tmp/version.txt | grep -qF "seatledger \$package_version (commit " || fail "--version does not name the package version \$package_version"

echo "-- 4. user, data directory, unit, completions, man page"
getent passwd seatledger | grep -q ":/var/lib/seatledger:/usr/sbin/nologin" || fail "no seatledger system user"
[ "\$(stat -c %U:%a /var/lib/seatledger)" = seatledger:750 ] || fail "data directory: \$(stat -c %U:%a /var/lib/seatledger)"
grep -q "^ExecStart=/usr/bin/seatledger serve" /lib/systemd/system/seatledger.service || fail "unit's ExecStart"
[ -s /etc/seatledger/env ] && grep -q "^/etc/seatledger/env\$" /var/lib/dpkg/info/seatledger.conffiles || fail "env conffile"
grep -q "seatledger" /usr/share/bash-completion/completions/seatledger || fail "bash completion"
[ -s /usr/share/zsh/vendor-completions/_seatledger ] && [ -s /usr/share/fish/vendor_completions.d/seatledger.fish ] || fail "zsh/fish completions"
zcat /usr/share/man/man1/seatledger.1.gz > /tmp/seatledger.1   # (grep -q on a pipe would SIGPIPE zcat under pipefail)
grep -q '^.TH SEATLEDGER 1' /tmp/seatledger.1 || fail "man page"
grep -q '^.SS "seatledger serve"' /tmp/seatledger.1 || fail "man page lacks serve"

echo "-- 5. seatledger demo, as the seatledger user, into the container's ledger path"
export $container_env
# The Dockerfile's listener, on a port free on this machine (the chroot shares its network).
export SEATLEDGER_LISTEN="127.0.0.1:$free_port"
runuser -u seatledger -- seatledger demo --keep "\$SEATLEDGER_DB" > /tmp/demo.out || fail "demo"
grep -q "2000010000000001" /tmp/demo.out || fail "the demo's report names no group"

echo "-- 6. serve with the container's environment, its HEALTHCHECK, /metrics, SIGTERM"
# setpriv execs serve itself (runuser would fork), so the SIGTERM below reaches serve.
setpriv --reuid=seatledger --regid=seatledger --init-groups seatledger serve 2> /tmp/serve.log &
serve=\$!
for _ in \$(seq 1 200); do grep -q '"event": *"start"' /tmp/serve.log 2>/dev/null && break; kill -0 \$serve || { cat /tmp/serve.log; fail "serve exited"; }; sleep 0.05; done
grep -q "\"version\": *\"\$package_version\"" /tmp/serve.log || { cat /tmp/serve.log; fail "serve's start line does not name \$package_version"; }
port="\${SEATLEDGER_LISTEN##*:}"
health="\$(curl -fsS "http://127.0.0.1:\$port/healthz")"
echo "\$health"
echo "\$health" | grep -q "\"version\": *\"\$package_version\"" || fail "/healthz does not name the version"
curl -fsS "http://127.0.0.1:\$port/metrics" > /tmp/metrics.txt
grep -q "^seatledger_build_info{version=\"\$package_version\",commit=" /tmp/metrics.txt || fail "/metrics has no build info"
sh -c '$healthcheck' || fail "the Dockerfile's HEALTHCHECK failed"
kill -TERM \$serve
wait \$serve || fail "serve exited \$? after SIGTERM"

echo "-- 7. apt-get purge"
apt-get purge -y -qq seatledger > /tmp/purge.log 2>&1 || { cat /tmp/purge.log; fail "purge"; }
cat /tmp/purge.log | grep seatledger: || true
grep -q "kept /var/lib/seatledger" /tmp/purge.log || fail "purge did not say it kept the data directory"
[ ! -e /usr/bin/seatledger ] && [ ! -e /etc/seatledger ] && [ ! -e /lib/systemd/system/seatledger.service ] || fail "purge left files"
! getent passwd seatledger >/dev/null || fail "purge left the user"
[ -f "\$SEATLEDGER_DB" ] || fail "purge removed the ledgers"
echo "test-deb: every check passed inside the root"
CHECK
chmod +x "$root/tmp/check.sh"
chroot "$root" /tmp/check.sh

echo "== systemd-analyze verify (the unit as packaged)"
# The bare root has no systemd to verify against, so this machine's systemd checks the unit, with
# ExecStart pointed at the packaged binary (verify also checks that the command is executable).
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work" ./usr/bin/seatledger ./lib/systemd/system/seatledger.service
install -d "$work/unit"
sed "s|^ExecStart=/usr/bin/seatledger |ExecStart=$work/usr/bin/seatledger |" "$work/lib/systemd/system/seatledger.service" > "$work/unit/seatledger.service"
grep -q "^ExecStart=$work/usr/bin/seatledger serve" "$work/unit/seatledger.service" || { echo "test-deb: FAIL: the unit's ExecStart is not /usr/bin/seatledger serve" >&2; exit 1; }
if ! systemd-analyze verify "$work/unit/seatledger.service" > "$work/verify.log" 2>&1; then
  cat "$work/verify.log" >&2
  echo "test-deb: FAIL: systemd-analyze verify" >&2
  exit 1
fi
echo "test-deb: passed ($(basename "$deb"))"
