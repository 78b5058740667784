#!/usr/bin/env python3
"""Writes the fuzz seed corpus, Tests/Fuzz/corpus/<target>/, from the repository's Assets/ and Tests/Fixtures/
files cut down to a few kB (and a few tiny tones made with sox, ffmpeg and lame for formats those folders lack).
Run from anywhere: python3 Tests/Fuzz/make_seeds.py. The output is committed; rerun only to change the seeds."""
import json, os, struct, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "Tests", "Fuzz", "corpus")
TMP = tempfile.mkdtemp()


def out(target, name, data):
    # The probe target opens the same files as the stream target, stopping after the headers.
    for folder in [target] + (["probe"] if target == "stream" else []):
        os.makedirs(os.path.join(CORPUS, folder), exist_ok=True)
        with open(os.path.join(CORPUS, folder, name), "wb") as f:
            f.write(data)


def tool(*args):
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def made(name, *args):
    """Runs a tool that writes TMP/name and returns the bytes."""
    path = os.path.join(TMP, name)
    tool(*[a.replace("OUT", path) for a in args])
    return open(path, "rb").read()


def read(rel):
    return open(os.path.join(ROOT, rel), "rb").read()


def caf_chunks(b):
    chunks, o = [], 8
    while o + 12 <= len(b):
        kind, size = b[o:o + 4], struct.unpack(">q", b[o + 4:o + 12])[0]
        chunks.append((kind, b[o + 12:o + 12 + size]))
        o += 12 + size
    return chunks


def caf(chunks):
    return b"caff" + struct.pack(">HH", 1, 0) + b"".join(k + struct.pack(">q", len(d)) + d for k, d in chunks)


def ima4_caf(rel, packets, trim=True):
    """The first `packets` IMA4 packets of a CAF, with a pakt that drops 10 priming frames and 7 at the end."""
    chunks = dict(caf_chunks(read(rel)))
    desc = chunks[b"desc"]
    bytes_per_packet = struct.unpack(">I", desc[16:20])[0]
    data = chunks[b"data"][:4 + packets * bytes_per_packet]
    parts = [(b"desc", desc)]
    if trim:
        parts.append((b"pakt", struct.pack(">qqii", packets, packets * 64 - 17, 10, 7)))
    return caf(parts + [(b"data", data)])


def aifc_ima4(rel, packets, channels):
    """The first `packets` packets of an IMA4 AIFC (FVER, COMM, SSND kept; sizes rewritten)."""
    b, o, chunks = read(rel), 12, []
    while o + 8 <= len(b):
        kind, size = b[o:o + 4], struct.unpack(">I", b[o + 4:o + 8])[0]
        chunks.append((kind, b[o + 8:o + 8 + size]))
        o += 8 + size + (size & 1)
    body = b""
    for kind, d in chunks:
        if kind == b"SSND":
            d = d[:8 + packets * 34 * channels]
        if kind == b"COMM":
            d = d[:2] + struct.pack(">I", packets) + d[6:]
        body += kind + struct.pack(">I", len(d)) + d + (b"\0" if len(d) & 1 else b"")
    return b"FORM" + struct.pack(">I", 4 + len(body)) + b"AIFC" + body


def tone(name, *fmt):
    """A 20 ms 440 Hz tone at 8 kHz (sox), in the format the arguments give."""
    return made(name, "sox", "-n", *fmt, "OUT", "synth", "0.02", "sine", "440")


def riff_chunks(b):
    chunks, o = [], 12
    while o + 8 <= len(b):
        kind, size = b[o:o + 4], struct.unpack("<I", b[o + 4:o + 8])[0]
        chunks.append((kind, b[o + 8:o + 8 + size]))
        o += 8 + size + (size & 1)
    return chunks


def wav_with_smpl(pcm_wav, start, last):
    loop = struct.pack("<6I", 0, 0, start, last, 0, 0)
    smpl = struct.pack("<9I", 0, 0, 125000, 60, 0, 0, 0, 1, 0) + loop
    body = b"".join(k + struct.pack("<I", len(d)) + d + (b"\0" if len(d) & 1 else b"")
                    for k, d in riff_chunks(pcm_wav) + [(b"smpl", smpl)])
    return b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WAVE" + body


def aiff_with_loop(pcm_aiff, begin, end):
    """MARK with markers 1 and 2 at `begin` and `end`, INST whose sustain loop (forward) runs between them."""
    b, o, chunks = pcm_aiff, 12, []
    while o + 8 <= len(b):
        kind, size = b[o:o + 4], struct.unpack(">I", b[o + 4:o + 8])[0]
        chunks.append((kind, b[o + 8:o + 8 + size]))
        o += 8 + size + (size & 1)
    mark = struct.pack(">H", 2) + struct.pack(">HIB", 1, begin, 3) + b"beg" + struct.pack(">HIB", 2, end, 3) + b"end"
    inst = bytes([60, 0, 0, 127, 0, 127]) + struct.pack(">h", 0) + struct.pack(">hhh", 1, 1, 2) + struct.pack(">hhh", 0, 0, 0)
    chunks = chunks[:1] + [(b"MARK", mark), (b"INST", inst)] + chunks[1:]
    body = b"".join(k + struct.pack(">I", len(d)) + d + (b"\0" if len(d) & 1 else b"") for k, d in chunks)
    return b"FORM" + struct.pack(">I", 4 + len(body)) + b[8:12] + body


def caf_with_marks(pcm_caf, start, end):
    """A `mark` chunk (after the audio) with a sustain loop slbg/slen."""
    def marker(kind, frame, ident):
        return kind + struct.pack(">dI", float(frame), ident) + b"\xff" * 4 + b"\0" * 4 + struct.pack(">I", 0)
    mark = struct.pack(">II", 1, 2) + marker(b"slbg", start, 1) + marker(b"slen", end, 2)
    return caf(caf_chunks(pcm_caf) + [(b"mark", mark)])


def mp3_head(rel, frames):
    """The ID3 tag (if any), the Xing/Info frame and the next `frames` MPEG frames of an MP3."""
    b = read(rel)
    o = 0
    if b[:3] == b"ID3":
        o = 10 + ((b[6] << 21) | (b[7] << 14) | (b[8] << 7) | b[9])
    rates = {0: 44100, 1: 48000, 2: 32000}
    kbps = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
    end = o
    for _ in range(frames + 1):
        h = b[end:end + 4]
        assert h[0] == 0xFF and (h[1] & 0xE0) == 0xE0, "expected an MPEG-1 Layer III frame"
        end += 144 * kbps[h[2] >> 4] * 1000 // rates[(h[2] >> 2) & 3] + ((h[2] >> 1) & 1)
    b = bytearray(b[:end])
    # The Xing/Info header counts the whole file's frames and bytes; make it describe the cut-down stream.
    for tag in (b"Xing", b"Info"):
        at = b.find(tag)
        if at >= 0:
            flags = struct.unpack(">I", b[at + 4:at + 8])[0]
            field = at + 8
            if flags & 1:
                b[field:field + 4] = struct.pack(">I", frames)
                field += 4
            if flags & 2:
                b[field:field + 4] = struct.pack(">I", len(b) - o)
            break
    return bytes(b)


# decode: every container and codec AudioFile reads.
wav8k = tone("t.wav", "-r", "8000", "-c", "1", "-b", "16")
out("decode", "pcm16.wav", wav8k)
out("decode", "float-stereo.wav", tone("f.wav", "-r", "8000", "-c", "2", "-e", "floating-point", "-b", "32"))
aiff8k = tone("t.aiff", "-r", "8000", "-c", "1", "-b", "16")
out("decode", "pcm16.aiff", aiff8k)
out("decode", "pcm24.caf", made("t.caf", "ffmpeg", "-y", "-i", os.path.join(TMP, "t.wav"), "-c:a", "pcm_s24be", "OUT"))
out("decode", "tone.flac", tone("t.flac", "-r", "8000", "-c", "1", "-b", "16"))
out("decode", "tone.ogg", tone("t.ogg", "-r", "8000", "-c", "1"))
out("decode", "ima4-pakt.caf", ima4_caf("Assets/loop_arp.caf", 24))
out("decode", "ima4-stereo.caf", ima4_caf("Tests/Fixtures/ima4/stereo_440_660.caf", 16, trim=False))
out("decode", "ima4-stereo.aifc", aifc_ima4("Tests/Fixtures/ima4/stereo_440_660.aifc", 16, 2))
out("decode", "cbr.mp3", mp3_head("Tests/Fixtures/mp3/sine440-mono-cbr128.mp3", 4))
out("decode", "vbr-xing.mp3", mp3_head("Tests/Fixtures/mp3/sine440-stereo-vbr.mp3", 4))

# loops: the chunks FileLoopPoints reads, on files small enough to decode in microseconds.
out("loops", "smpl.wav", wav_with_smpl(wav8k, 16, 99))
out("loops", "inst-mark.aiff", aiff_with_loop(aiff8k, 16, 100))
out("loops", "mark.caf", caf_with_marks(open(os.path.join(TMP, "t.caf"), "rb").read(), 16, 100))
out("loops", "plain.wav", wav8k)
# Sounds held compact (Sound.Storage .int8, .int24, .ima4): the target checks their samples against .float32's.
out("loops", "ima4.caf", read("Tests/Fixtures/ima4/loud_1k.caf"))
out("loops", "pcm24.wav", made("t24.wav", "sox", "-n", "-b", "24", "-r", "8000", "OUT", "synth", "0.05", "sine", "440"))
out("loops", "pcm8.wav", made("t8.wav", "sox", "-n", "-b", "8", "-e", "unsigned-integer", "-r", "8000", "OUT",
                              "synth", "0.05", "sine", "440"))

# stream: what StreamFile opens (an MP3 streams only with a Xing/Info header).
out("stream", "xing.mp3", mp3_head("Tests/Fixtures/mp3/sine440-stereo-vbr.mp3", 6))
out("stream", "ima4-pakt.caf", ima4_caf("Assets/fx_explosion.caf", 12))
out("stream", "ima4-mono.aifc", aifc_ima4("Tests/Fixtures/ima4/mono_440.aifc", 24, 1))
out("stream", "pcm16.wav", wav8k)
out("stream", "tone.flac", open(os.path.join(TMP, "t.flac"), "rb").read())

# filestream: the push parser's containers and codecs (the same files the decoders read).
for name in ["cbr.mp3", "float-stereo.wav", "ima4-pakt.caf", "ima4-stereo.aifc", "pcm16.aiff", "pcm16.wav", "pcm24.caf"]:
    out("filestream", name, open(os.path.join(CORPUS, "decode", name), "rb").read())

# The sounds scene seeds name (Tests/Fuzz/scene-sounds/, SceneTarget): two ordinary ones, and two whose headers
# claim absurd lengths that StreamFile accepts (an Ogg cut by one byte, for which libsndfile reports Int64.max
# frames; an MP3 whose Xing header claims 0xFFFFFFFF frames), so the scene arithmetic meets them.
SOUNDS = os.path.join(ROOT, "Tests", "Fuzz", "scene-sounds")
os.makedirs(SOUNDS, exist_ok=True)
def sound(name, data):
    with open(os.path.join(SOUNDS, name), "wb") as f:
        f.write(data)
sound("mono.wav", made("m.wav", "sox", "-n", "-r", "48000", "-c", "1", "-b", "16", "OUT", "synth", "0.01", "sine", "440"))
sound("stereo.caf", ima4_caf("Tests/Fixtures/ima4/stereo_440_660.caf", 10))
sound("endless.ogg", open(os.path.join(TMP, "t.ogg"), "rb").read()[:-1])
huge = bytearray(mp3_head("Tests/Fixtures/mp3/sine440-stereo-vbr.mp3", 6))
huge[huge.find(b"Xing") + 8:huge.find(b"Xing") + 12] = b"\xff\xff\xff\xff"
sound("huge.mp3", bytes(huge))

# scene: the demo scenes' shape, on the sounds above.
def scene(name, value):
    out("scene", name, json.dumps(value, separators=(",", ":")).encode())

scene("tracks-effects.json", {
    "sampleRate": 48000, "duration": 0.05,
    "tracks": [{"name": "a", "file": "mono.wav", "start": 0.001, "loops": 2, "volume": 0.7, "pan": -0.2,
                "fadeIn": 0.002, "fadeOut": 0.003},
               {"name": "b", "file": "stereo.caf", "start": 0.0, "loops": -1, "rate": 1.5, "stream": True},
               {"name": "c", "file": "mono.wav", "offset": 0.001, "loopStart": 0.001, "loopEnd": 0.004, "loops": 1,
                "rateMode": "preservePitch", "rate": 0.75, "priority": 10}],
    "effects": [{"name": "fx", "file": "mono.wav", "at": 0.002, "pan": 0.5, "volume": 0.6, "priority": 200}],
    "maxVoices": 3})
scene("buses.json", {
    "sampleRate": 44100,
    "buses": [{"name": "music", "volume": 0.8, "effects": [{"type": "eq", "preset": "Rock"},
                                                          {"type": "highshelf", "frequency": 8000, "q": 0.707, "gain": -3}]},
              {"name": "sfx", "pan": 0.1, "mute": False, "solo": True,
               "effects": [{"type": "delay", "time": 0.01, "feedback": 0.35, "mix": 0.3},
                           {"type": "lowpass", "frequency": 6000, "q": 0.707},
                           {"type": "eq", "gains": [0, 1, 2, 3, 4, -4, -3, -2, -1, 0]}]}],
    "master": {"effects": [{"type": "limiter", "ceiling": -1.0, "lookahead": 0.005, "release": 0.05}]},
    "tracks": [{"name": "m", "file": "mono.wav", "bus": "music", "loops": 1}],
    "effects": [{"file": "mono.wav", "at": 0.001, "bus": "sfx"}]})
scene("timeline.json", {
    "duration": 0.02,
    "buses": [{"name": "music"}],
    "tracks": [{"name": "a", "file": "mono.wav", "loops": -1, "bus": "music"},
               {"name": "b", "file": "stereo.caf", "loops": 3}],
    "timeline": [{"at": 0.001, "track": "a", "set": {"volume": 0.2, "pan": -0.5}, "ramp": 0.001},
                 {"at": 0.002, "track": "a", "set": {"rate": 1.5, "loops": 2}},
                 {"at": 0.003, "track": "b", "seek": 0.001},
                 {"at": 0.004, "track": "b", "pause": {"fade": 0.001}},
                 {"at": 0.005, "track": "b", "resume": {}},
                 {"at": 0.006, "track": "a", "stop": {"fade": 0.001}},
                 {"at": 0.007, "track": "a", "play": {"offset": 0.002}},
                 {"at": 0.001, "bus": "music", "set": {"volume": 0.3}, "ramp": 0.002}]})
scene("environment.json", {
    "duration": 0.02,
    "buses": [{"name": "music", "effects": [{"type": "compressor", "threshold": -30, "ratio": 4, "knee": 6,
                                            "attack": 0.001, "release": 0.01, "makeupGain": 1, "lookahead": 0.001,
                                            "sidechain": "dialogue"}]},
              {"name": "cave", "effects": [{"type": "reverb", "preset": "generic", "decayTime": 0.5, "preDelay": 0.001,
                                           "mix": 1}]},
              {"name": "dialogue", "volume": 0.9}],
    "master": {"effects": [{"type": "limiter"}]},
    "tracks": [{"name": "a", "file": "mono.wav", "loops": -1, "bus": "music",
                "sends": [{"bus": "cave", "level": 0.3}, {"bus": "master", "level": 0.1, "preFader": True,
                                                         "filter": {"type": "highpass", "gainLF": 0.5}}]},
               {"name": "b", "file": "stereo.caf", "loops": 3, "bus": "dialogue",
                "filter": {"type": "bandpass", "gain": 0.9, "gainHF": 0.3, "gainLF": 0.6}}],
    "effects": [{"file": "mono.wav", "at": 0.001, "position": [1, 0, -1], "filter": {"type": "lowpass", "gainHF": 0.2},
                 "sends": [{"bus": "cave", "level": 0.8, "filter": {"type": "lowpass", "gain": 0.7}}]}],
    "timeline": [{"at": 0.002, "track": "a", "set": {"send": "cave", "level": 0.6}, "ramp": 0.003},
                 {"at": 0.004, "track": "a", "set": {"send": 1, "level": 0, "filter": {"type": "lowpass", "gainHF": 0.1}}},
                 {"at": 0.006, "track": "b", "set": {"filter": {"type": "highpass", "gainLF": 1}}, "ramp": 0}]})
# The absurd sounds are refused now (their lengths are checked against their bytes), so this scene is no seed
# but a saved input that must be refused with a typed error (FuzzRegressionTests).
def crash_input(target, name, value):
    folder = os.path.join(ROOT, "Tests", "Fuzz", "crashes", target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(json.dumps(value, separators=(",", ":")).encode())
crash_input("scene", "absurd-lengths.json", {
    "duration": 0.02,
    "tracks": [{"name": "ogg", "file": "endless.ogg", "stream": True},
               {"name": "mp3", "file": "huge.mp3", "stream": True, "start": 0.001, "offset": 0.5, "loops": 1}],
    "timeline": [{"at": 0.002, "track": "mp3", "seek": 1000}]})
print("seeds written to", CORPUS, "and", SOUNDS)
