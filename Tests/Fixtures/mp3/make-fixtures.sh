#!/bin/sh
# Regenerates the MP3 fixtures used by MP3DecoderTests. Needs sox and lame.
#   sine440-mono-cbr128.mp3:   1.0 s, 44.1 kHz mono, 0.5·sin(2π·440·n/44100), LAME CBR 128 kbit/s
#   sine440-stereo-vbr.mp3:    0.5 s, 44.1 kHz stereo (L 440 Hz, R 660 Hz, amplitude 0.5), LAME VBR -V 4
# LAME writes its Info/Xing tag with encoder delay and padding, which gapless decoding removes.
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sox -n -r 44100 -c 1 -b 16 "$tmp/mono.wav" synth 1.0 sine 440 vol 0.5
sox -n -r 44100 -c 2 -b 16 "$tmp/stereo.wav" synth 0.5 sine 440 sine 660 vol 0.5
lame --quiet --noreplaygain -b 128 "$tmp/mono.wav" sine440-mono-cbr128.mp3
lame --quiet --noreplaygain -V 4 "$tmp/stereo.wav" sine440-stereo-vbr.mp3
