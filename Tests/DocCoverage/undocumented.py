#!/usr/bin/env python3
"""Lists public symbols of the Ensemble module that have no doc comment; exits 1 if there are any.

Reads the symbol graphs that `swift package dump-symbol-graph --minimum-access-level public` writes
(run by `Tests/DocCoverage/check.sh`). Implementations of standard-library protocol requirements
(`description`, `==`, `hash(into:)`, ...) are skipped: DocC shows the protocol's documentation for them.
"""
import glob
import json
import sys

# Requirements of standard protocols whose documentation DocC inherits.
WITNESSES = {
    "description", "debugDescription", "==(_:_:)", "!=(_:_:)", "<(_:_:)", "hash(into:)", "hashValue",
    "encode(to:)", "init(from:)", "init(rawValue:)", "rawValue", "makeAsyncIterator()", "makeIterator()",
    "next()", "errorDescription", "id", "allCases", "RawValue", "AllCases", "Element", "AsyncIterator",
    "Iterator", "Failure", "init(integerLiteral:)", "init(floatLiteral:)", "init(stringLiteral:)",
    "startIndex", "endIndex", "index(after:)", "subscript(_:)", "Index", "count",
}


def main(folder):
    files = sorted(glob.glob(f"{folder}/Ensemble.symbols.json") + glob.glob(f"{folder}/Ensemble@*.symbols.json"))
    if not files:
        print(f"no Ensemble symbol graph in {folder}", file=sys.stderr)
        return 2
    missing = []
    total = 0
    for path in files:
        with open(path) as f:
            graph = json.load(f)
        for symbol in graph["symbols"]:
            if symbol.get("accessLevel") not in ("public", "open"):
                continue
            names = symbol["pathComponents"]
            if any(part.startswith("_") for part in names):
                continue
            if symbol.get("spi"):
                continue
            total += 1
            if symbol.get("docComment", {}).get("lines"):
                continue
            if names[-1] in WITNESSES:
                continue
            location = symbol.get("location", {})
            uri = location.get("uri", "").split("/Sources/")[-1]
            line = location.get("position", {}).get("line", 0) + 1
            missing.append(f"Sources/{uri}:{line}: {'.'.join(names)} ({symbol['kind']['displayName']})")
    for entry in sorted(set(missing)):
        print(entry)
    print(f"{len(set(missing))} of {total} public symbols undocumented", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else ".build/symbol-graphs"))
