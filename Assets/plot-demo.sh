#!/bin/sh
# Renders the demo scene with a picture of the mix, then (if chromium is installed) a PNG of that picture.
#   Assets/plot-demo.sh [OUT_DIR]      (default: the current directory; run from the repository root)
# Writes demo.wav, demo.svg and, with chromium, demo.png (1400 × 900, the plot's own size).
set -eu
out=${1:-.}
here=$(cd "$(dirname "$0")" && pwd)
ensemble=${ENSEMBLE:-"$here/../.build/release/ensemble"}
[ -x "$ensemble" ] || ensemble="$here/../.build/debug/ensemble"
"$ensemble" render "$here/demo.json" -o "$out/demo.wav" --plot "$out/demo.svg"
if command -v chromium >/dev/null 2>&1; then
    svg=$(cd "$out" && pwd)/demo.svg
    chromium --headless --no-sandbox --screenshot="$out/demo.png" --window-size=1400,900 "file://$svg" 2>/dev/null
    echo "wrote $out/demo.svg and $out/demo.png"
else
    echo "wrote $out/demo.svg (install chromium for a PNG)"
fi
