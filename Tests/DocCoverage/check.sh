#!/bin/sh
# Doc coverage: lists every public symbol of the Ensemble module without a doc comment; exits 1 if there is one.
# Run from the package root or anywhere: Tests/DocCoverage/check.sh
cd "$(dirname "$0")/../.." || exit 2
folder=".build/$(uname -m)-unknown-linux-gnu/symbolgraph"
rm -f "$folder"/Ensemble.symbols.json "$folder"/Ensemble@*.symbols.json
# It also tries the test-discovery modules, which have no symbol graph and make it exit 1; only Ensemble's
# graph matters here, and undocumented.py fails (exit 2) when that one is missing.
swift package dump-symbol-graph --minimum-access-level public >/dev/null 2>&1
exec python3 Tests/DocCoverage/undocumented.py "$folder"
