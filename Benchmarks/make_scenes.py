#!/usr/bin/env python3
"""Writes benchmark scenes of N looping voices over the peer harness's inputs (../shared/peerbench/make_inputs.sh):
even voices play a mono file, odd voices a stereo one, each with its own volume and pan, and with --pitch a rate
spread over 0.5…2.0: the same workload OpenAL Soft's loopback peer (openal_mix.c) renders."""
import json
import sys

def scene(n, pitch, inputs="/tmp/peer-in", seconds=10):
    tracks = []
    for i in range(n):
        t = {"file": f"{inputs}/{'m' if i % 2 == 0 else 's'}{i % 8}.wav", "loops": -1,
             "volume": round(0.1 + 0.8 * ((i * 37) % 100) / 100, 3),
             "pan": round(-1 + 2 * ((i * 53) % 100) / 99, 3)}
        if pitch:
            t["rate"] = round(0.5 + 1.5 * ((i * 71) % 100) / 99, 3)
        tracks.append(t)
    return {"duration": seconds, "tracks": tracks}

if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "/tmp"
    for n in (16, 64, 256, 1024):
        for pitch in (False, True):
            name = f"{out}/bench-{n}{'-pitch' if pitch else ''}.json"
            with open(name, "w") as f:
                json.dump(scene(n, pitch), f)
            print(name)
