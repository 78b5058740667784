#!/usr/bin/env bash
# Builds ensemble-fuzz with libFuzzer and AddressSanitizer (scratch path .build-fuzz, apart from the normal build;
# optimised, which runs ten times more inputs per second than a debug build and keeps Swift's overflow and bounds
# traps) and fuzzes each target for SECONDS_PER_TARGET seconds (default 20), starting from its seed corpus
# Tests/Fuzz/corpus/<target>/.
#
#   Tests/Fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]      targets: decode loops probe stream scene filestream (default: all)
#
# New corpus entries, logs and failing inputs go to $ENSEMBLE_FUZZ_OUT (default: a new temp folder), never into
# the repository. Exits 1, after printing each failing input's path, when a target crashed, hung or ran out of
# memory; a failing input worth keeping goes into Tests/Fuzz/crashes/<target>/ (see FuzzRegressionTests).
set -uo pipefail
cd "$(dirname "$0")/../.."

seconds=${1:-20}
shift $(( $# > 0 ? 1 : 0 ))
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(decode loops probe stream scene filestream); fi
out=${ENSEMBLE_FUZZ_OUT:-$(mktemp -d -t ensemble-fuzz.XXXXXX)}

swift build -c release --scratch-path .build-fuzz --product ensemble-fuzz \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DENSEMBLE_LIBFUZZER || { echo "fuzz build failed"; exit 1; }
fuzzer=.build-fuzz/release/ensemble-fuzz
# Swift's own crash backtracer trips over AddressSanitizer; libFuzzer prints the stack of a trap instead.
export SWIFT_BACKTRACE=enable=no
# Where the targets write each input (in memory); crashed processes leave theirs behind, so it all goes at the end.
ENSEMBLE_FUZZ_SCRATCH=$(mktemp -d /dev/shm/ensemble-fuzz.XXXXXX 2>/dev/null || mktemp -d)
export ENSEMBLE_FUZZ_SCRATCH
trap 'rm -rf "$ENSEMBLE_FUZZ_SCRATCH"' EXIT
export LSAN_OPTIONS="suppressions=$PWD/Tests/Fuzz/lsan-suppressions.txt:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

status=0
for target in "${targets[@]}"; do
    mkdir -p "$out/$target/corpus" "$out/$target/failures"
    # The first folder receives new inputs; the seeds are only read. -timeout, -rss_limit_mb and -max_len
    # are set by ensemble-fuzz itself (FuzzTarget), so a replay by hand gets the same limits.
    "$fuzzer" "$target" -max_total_time="$seconds" -print_final_stats=1 \
        -artifact_prefix="$out/$target/failures/" "$out/$target/corpus" "Tests/Fuzz/corpus/$target" \
        > "$out/$target.log" 2>&1
    code=$?
    runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$out/$target.log" | tail -n 1)
    failures=$(find "$out/$target/failures" -type f | sort)
    if [ "$code" -ne 0 ] || [ -n "$failures" ]; then
        status=1
        echo "fuzz $target: FAILED (exit $code) after ${runs:-?} inputs; log: $out/$target.log"
        grep -E "^(==[0-9]+==ERROR|SUMMARY|Fatal error|.*: Fatal error)" "$out/$target.log" | head -n 5
        # The innermost frame in our own code, which is what a reader needs first.
        grep -E "^ +#[0-9]+ " "$out/$target.log" | grep -oE "(Sources|Tests)/[A-Za-z0-9_/+.-]+\.swift:[0-9]+" \
            | head -n 1 | sed 's/^/  at: /'
        for f in $failures; do echo "  failing input: $f"; done
        echo "  replay: $fuzzer $target FILE; minimise: $fuzzer $target -minimize_crash=1 -runs=10000 FILE"
    else
        echo "fuzz $target: ok, ${runs:-?} inputs in ${seconds} s, corpus $(find "$out/$target/corpus" -type f | wc -l) new + seeds"
    fi
done
exit "$status"
