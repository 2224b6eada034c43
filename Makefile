# The README's two commands. Each installs the Debian packages it needs first
# (Tools/system-packages.txt; as root or through sudo), then runs SwiftPM.
.PHONY: demo test deb

# Ingest the bundled sample streams into a temporary SQLite ledger and print a report.
demo:
	@bash Tools/scripts/install-system-packages.sh build
	swift run seatledger demo

# The whole suite: swift test plus Apple's signed test vectors through the CLI.
test:
	@bash Tools/scripts/test.sh

# The Debian package from a release build (static Swift runtime): .build/deb/seatledger_<version>_<arch>.deb.
deb:
	@bash Tools/scripts/build-deb.sh
