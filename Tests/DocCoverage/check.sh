#!/bin/sh
# Documentation checks, from the package root or anywhere: every public symbol of the library has a doc comment
# (undocumented.py), and the DocC catalogue builds without a warning, so every link in it resolves. Writes the
# documentation archive to .build/Ensemble.doccarchive (`docc preview` serves it).
cd "$(dirname "$0")/../.." || exit 2
swift build --target Ensemble >/dev/null || exit 2
bin=$(swift build --show-bin-path) || exit 2
graphs=.build/symbol-graphs
rm -rf "$graphs" && mkdir -p "$graphs" || exit 2
# The umbrella module's graph holds every stage's public API; the extractor includes re-exported modules only
# when it is told which. The C modules are found through the module maps of the build and the system shims.
set --
for map in "$bin"/C*.build/module.modulemap; do set -- "$@" -Xcc "-fmodule-map-file=$map"; done
for shim in Sources/C*/module.modulemap; do set -- "$@" -I "$(dirname "$shim")"; done
swift-symbolgraph-extract -module-name Ensemble -I "$bin/Modules" "$@" -target "$(uname -m)-unknown-linux-gnu" \
    -output-dir "$graphs" -minimum-access-level public \
    -experimental-allowed-reexported-modules=EnsembleFormats,EnsembleRender,EnsembleEngine,EnsembleOutput,EnsembleScene \
    || exit 2
status=0
python3 Tests/DocCoverage/undocumented.py "$graphs" || status=$?
docc convert Sources/Ensemble/Ensemble.docc --additional-symbol-graph-dir "$graphs" \
    --output-path .build/Ensemble.doccarchive --fallback-display-name Ensemble \
    --fallback-bundle-identifier ensemble --warnings-as-errors >/dev/null || status=$?
exit $status
