# The README's two commands. Each installs the Debian packages it needs first
# (Tools/system-packages.txt; as root or through sudo), then runs SwiftPM.
.PHONY: demo test

# Ingest the bundled sample streams into a temporary SQLite ledger and print a report.
demo:
	@bash Tools/scripts/install-system-packages.sh build
	swift run seatledger demo

# The whole suite: swift test plus Apple's signed test vectors through the CLI.
test:
	@bash Tools/scripts/test.sh
