#!/bin/sh
# Regenerates the IMA4 fixtures: small ffmpeg-encoded CAF/AIFC files from synthetic signals, plus ffmpeg's own
# decodes of them (raw interleaved s16le) that the tests must match sample for sample.
# Run from anywhere; writes next to this script. Needs ffmpeg (made with ffmpeg 5.1).
set -eu
cd "$(dirname "$0")"
FF="ffmpeg -hide_banner -loglevel error -y -bitexact"

# Mono 440 Hz and stereo 440/660 Hz tones (the stereo channels differ so interleaving mistakes show).
$FF -f lavfi -i "sine=frequency=440:sample_rate=44100:duration=0.3" -c:a adpcm_ima_qt mono_440.caf
$FF -f lavfi -i "sine=frequency=440:sample_rate=44100:duration=0.3" -c:a adpcm_ima_qt -f aiff mono_440.aifc
$FF -f lavfi -i "sine=frequency=440:sample_rate=22050:duration=0.3" -f lavfi -i "sine=frequency=660:sample_rate=22050:duration=0.3" \
    -filter_complex "[0:a][1:a]amerge=inputs=2[a]" -map "[a]" -c:a adpcm_ima_qt stereo_440_660.caf
$FF -f lavfi -i "sine=frequency=440:sample_rate=22050:duration=0.3" -f lavfi -i "sine=frequency=660:sample_rate=22050:duration=0.3" \
    -filter_complex "[0:a][1:a]amerge=inputs=2[a]" -map "[a]" -c:a adpcm_ima_qt -f aiff stereo_440_660.aifc

# A loud, clipping 1 kHz tone and full-scale noise: drive the step index to its extremes and the predictor into
# its clamps.
$FF -f lavfi -i "aevalsrc=1.3*sin(2*PI*1000*t):s=22050:d=0.25" -c:a adpcm_ima_qt loud_1k.caf
$FF -f lavfi -i "anoisesrc=color=white:amplitude=0.9:seed=7:sample_rate=22050:duration=0.25" -c:a adpcm_ima_qt noise.caf

# ffmpeg's encoder carries its state across packets, so each header repeats the decoder's running state and the
# "keep the running predictor" rule always applies. Splicing the packets of two encodes makes headers that
# disagree with the running state, so the decoder must also reset. Both inputs have identical headers (same
# rate and length), so the spliced file is loud_1k.caf's header and first 40 packets followed by noise.caf's rest.
data_start=$(( $(grep -obUa data loud_1k.caf | head -n 1 | cut -d: -f1) + 16 ))
split=$(( data_start + 40 * 34 ))
head -c "$split" loud_1k.caf > spliced.caf
tail -c +"$(( split + 1 ))" noise.caf >> spliced.caf
rm noise.caf

for f in mono_440.caf mono_440.aifc stereo_440_660.caf stereo_440_660.aifc loud_1k.caf spliced.caf; do
    $FF -i "$f" -f s16le -c:a pcm_s16le "$f.s16le"
done
