#!/bin/sh
# Renders the demo scene with a picture of the mix; with rsvg-convert (librsvg) installed, render also draws a PNG of it.
#   Assets/plot-demo.sh [OUT_DIR]      (default: the current directory; run from the repository root)
# Writes demo.wav, demo.svg and, with rsvg-convert, demo.png (the plot's own size).
set -eu
out=${1:-.}
here=$(cd "$(dirname "$0")" && pwd)
ensemble=${ENSEMBLE:-"$here/../.build/release/ensemble"}
[ -x "$ensemble" ] || ensemble="$here/../.build/debug/ensemble"
rm -f "$out/demo.png"
"$ensemble" render "$here/demo.json" -o "$out/demo.wav" --plot "$out/demo.svg"
if [ -f "$out/demo.png" ]; then
    echo "wrote $out/demo.svg and $out/demo.png"
else
    echo "wrote $out/demo.svg (install librsvg2-bin, for rsvg-convert, for a PNG)"
fi
