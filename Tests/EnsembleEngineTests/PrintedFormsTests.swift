import XCTest
import EnsembleTestSupport
@testable import EnsembleFormats
@testable @_spi(Testing) import EnsembleRender
@testable import EnsembleEngine
@testable import EnsembleOutput
@testable import EnsembleSoak

/// The engine's handles and reports print as a person reads them (they printed as `EnsembleEngine.Track` or as
/// the compiler's dump of their fields).
final class PrintedFormsTests: XCTestCase {
    func testHandlesAndEventsPrintWhatHappenedToWhatAndWhen() throws {
        let engine = try makeEngine()
        let queue = engine.makeEventQueue()
        let track = try engine.makeTrack(try monoSound(100, name: "/sounds/drums.wav") { _ in 0.1 })
        let effect = try engine.registerEffect(try monoSound(50, name: "coin.wav") { _ in 0.1 })
        XCTAssertEqual("\(track)", "Track \"drums.wav\"")
        XCTAssertEqual("\(effect)", "SoundEffect \"coin.wav\"")
        try track.play(at: engine.time(frame: 10))
        let instance = try engine.fire(effect, at: engine.time(frame: 20))
        XCTAssertTrue("\(instance)".hasPrefix("\"coin.wav\" firing "), "\(instance)")
        _ = engine.renderOffline(frames: 200, blockFrames: 64)
        var lines: [String] = []
        queue.drain { lines.append("\($0)") }
        XCTAssertEqual(lines, [
            "trackStarted Track \"drums.wav\" at frame 10 (\(10.0 / 48000) s at 48000.0 Hz)",
            "effectStarted \(instance) at frame 20 (\(20.0 / 48000) s at 48000.0 Hz)",
            "effectEnded \(instance) at frame 70 (\(70.0 / 48000) s at 48000.0 Hz): finished",
            "trackEnded Track \"drums.wav\" at frame 110 (\(110.0 / 48000) s at 48000.0 Hz): finished",
        ])
    }

    // The values below print as written here (the expected text was written first, then the code made to match).

    func testFileStageValues() {
        XCTAssertEqual("\(AudioContainer.rifx)", "rifx")
        XCTAssertEqual("\(AudioFileError.Kind.tooLarge)", "tooLarge")
        XCTAssertEqual("\(AudioStreamFormat.Codec.imaADPCM)", "ima-adpcm")
        let pcm = AudioStreamFormat(codec: .pcm, sampleRate: 44100, channelCount: 2, bitsPerSample: 16, bytesPerPacket: 4,
                                    framesPerPacket: 1)
        XCTAssertEqual("\(pcm)", "44.1 kHz 2 ch 16-bit PCM")
        XCTAssertEqual("\(AudioStreamFormat(codec: .float, sampleRate: 48000, channelCount: 1, bitsPerSample: 32, bytesPerPacket: 4, framesPerPacket: 1, isBigEndian: true))",
                       "48 kHz 1 ch 32-bit float big-endian")
        XCTAssertEqual("\(AudioStreamFormat(codec: .pcm, sampleRate: 22050, channelCount: 1, bitsPerSample: 8, bytesPerPacket: 1, framesPerPacket: 1, isUnsigned: true))",
                       "22.05 kHz 1 ch 8-bit PCM unsigned")
        XCTAssertEqual("\(AudioStreamFormat(codec: .ima4, sampleRate: 44100, channelCount: 2, bitsPerSample: 0, bytesPerPacket: 68, framesPerPacket: 64))",
                       "44.1 kHz 2 ch ima4, 64 frames in 68 bytes a packet")
        XCTAssertEqual("\(AudioStreamFormat(codec: .mpeg, sampleRate: 44100, channelCount: 2, bitsPerSample: 0, bytesPerPacket: 0, framesPerPacket: 1152))",
                       "44.1 kHz 2 ch mpeg, 1152 frames a packet")
        let packet = AudioStreamPacketDescription(byteOffset: 4096, byteCount: 417, frameCount: 1152)
        XCTAssertEqual("\(packet)", "1152 frames in 417 bytes at byte 4096")
        let packets = AudioStreamPackets(firstPacket: 12, bytes: [UInt8](repeating: 0, count: 1251),
                                         descriptions: [packet, packet, packet])
        XCTAssertEqual("\(packets)", "3 packets from packet 12, 1251 bytes")
        XCTAssertEqual("\(AudioFileStreamProperty.fileFormat(.wav))", "fileFormat wav")
        XCTAssertEqual("\(AudioFileStreamProperty.dataFormat(pcm))", "dataFormat 44.1 kHz 2 ch 16-bit PCM")
        XCTAssertEqual("\(AudioFileStreamProperty.dataOffset(44))", "dataOffset byte 44")
        XCTAssertEqual("\(AudioFileStreamProperty.audioDataByteCount(1024))", "audioDataByteCount 1024 bytes")
        XCTAssertEqual("\(AudioFileStreamProperty.audioDataPacketCount(20))", "audioDataPacketCount 20 packets")
        XCTAssertEqual("\(AudioFileStreamProperty.bitRate(128000))", "bitRate 128 kbit/s")
        XCTAssertEqual("\(AudioFileStreamProperty.packetTable(primingFrames: 576, remainderFrames: 1000))",
                       "packetTable 576 priming, 1000 remainder frames")
        XCTAssertEqual("\(AudioFileStreamProperty.seekTable("xing"))", "seekTable \"xing\"")
        XCTAssertEqual("\(AudioFileStreamEvent.property(.frameCount(48000)))", "property frameCount 48000 frames")
        XCTAssertEqual("\(AudioFileStreamEvent.readyToProducePackets)", "readyToProducePackets")
        XCTAssertEqual("\(AudioFileStreamEvent.packets(packets))", "packets: 3 packets from packet 12, 1251 bytes")
        XCTAssertEqual("\(AudioFileStreamEvent.resynchronized(byteOffset: 5000, skippedBytes: 17))",
                       "resynchronized at byte 5000 after 17 bytes skipped")
        XCTAssertEqual("\(AudioFileStreamSeek(byteOffset: 4096, packet: 12, framesToSkip: 100, isEstimated: false))",
                       "from byte 4096: packet 12, skip 100 frames")
        XCTAssertEqual("\(AudioFileStreamSeek(byteOffset: 8192, packet: 30, framesToSkip: 0, isEstimated: true))",
                       "from byte 8192 (estimated): packet 30")
        XCTAssertEqual("\(AudioFileInfo(container: "wav", codec: "pcm16", sampleRate: 44100, channelCount: 2, frameCount: 132300))",
                       "44.1 kHz 2 ch 3.000 s (wav, pcm16)")
        XCTAssertEqual("\(AudioFileInfo(container: "mp3", codec: "mp3", sampleRate: 44100, channelCount: 2, frameCount: 441000, bitRate: 128000))",
                       "44.1 kHz 2 ch 10.000 s (mp3, mp3, 128 kbit/s)")
        var decoded = DecodedAudio(sampleRate: 48000, channels: [[Float](repeating: 0, count: 24000)])
        XCTAssertEqual("\(decoded)", "48 kHz 1 ch 0.500 s (24000 frames)")
        decoded.nonFiniteSamples = 3
        XCTAssertEqual("\(decoded)", "48 kHz 1 ch 0.500 s (24000 frames, 3 non-finite samples silenced)")
    }

    func testRenderStageEnumsPrintTheirSceneSpelling() {
        XCTAssertEqual("\(ValuePolicy.strict)", "strict")
        XCTAssertEqual("\(ResamplerQuality.cubic)", "cubic")
        XCTAssertEqual("\(VirtualReason.voiceCap)", "voiceCap")
        XCTAssertEqual("\(EndReason.stolen)", "stolen")
        XCTAssertEqual("\(CommandDropReason.queueFull)", "queueFull")
        XCTAssertEqual("\(RateMode.preservePitch)", "preservePitch")
        XCTAssertEqual("\(SpeakerLayout.surround51)", "surround51")
        XCTAssertEqual("\(DistanceModel.exponentClamped)", "exponentClamped")
        XCTAssertEqual("\(BiquadShape.highshelf)", "highshelf")
        XCTAssertEqual("\(EffectLimits.StealPolicy.refuse)", "none", "the scene file's spelling, not the case's name")
        XCTAssertEqual("\(VoiceFilter.Kind.bandpass)", "bandpass")
    }

    func testRenderStageValues() throws {
        XCTAssertEqual("\(EffectLimits(maxInstances: 2, steal: .oldest, cooldown: 0.25))",
                       "EffectLimits(maxInstances: 2, steal: oldest, cooldown: 0.25 s)")
        XCTAssertEqual("\(EffectLimits())", "EffectLimits(unlimited)")
        XCTAssertEqual("\(EffectLimits(cooldown: 1))", "EffectLimits(cooldown: 1 s)")
        XCTAssertEqual("\(EffectLimits(maxInstances: 1, steal: .refuse))", "EffectLimits(maxInstances: 1, steal: none)")

        XCTAssertEqual("\(VoiceFilter.lowpass(gain: 0.5, gainHF: 0.1))", "VoiceFilter(lowpass, gain: 0.5, gainHF: 0.1)")
        XCTAssertEqual("\(VoiceFilter.highpass(gainLF: 0.25))", "VoiceFilter(highpass, gain: 1, gainLF: 0.25)")
        XCTAssertEqual("\(VoiceFilter.bandpass(gain: 0.8, gainLF: 0.5, gainHF: 0.2))",
                       "VoiceFilter(bandpass, gain: 0.8, gainLF: 0.5, gainHF: 0.2)")

        XCTAssertEqual("\(AuxSend(bus: try Bus(3), level: 0.5, preFader: true))", "AuxSend(to bus 3, level: 0.5, pre-fader)")
        XCTAssertEqual("\(AuxSend(bus: .master, filter: .lowpass(gainHF: 0.2)))",
                       "AuxSend(to master, level: 1, filter: VoiceFilter(lowpass, gain: 1, gainHF: 0.2))")

        XCTAssertEqual("\(CompressorSettings())", "CompressorSettings(thresholdDB: -24, ratio: 4)")
        XCTAssertEqual("\(CompressorSettings(thresholdDB: -20, ratio: 8, attack: 0.001, sidechain: try Bus(2)))",
                       "CompressorSettings(thresholdDB: -20, ratio: 8, attack: 0.001 s, sidechain: bus 2)")

        var reverb = ReverbSettings()
        reverb.gain = 0.5
        reverb.decayTime = 2.5
        reverb.mix = 0.3
        XCTAssertEqual("\(reverb)", "ReverbSettings(gain: 0.5, decayTime: 2.5 s, mix: 0.3)")
        let room = try XCTUnwrap(ReverbSettings.preset(named: "smallRoom"))
        XCTAssertEqual("\(room)", "ReverbSettings(preset: \"smallRoom\")")

        XCTAssertEqual("\(EffectSpec.filter(.peaking, frequency: 1000, q: 0.7, gainDB: 6))",
                       "filter(peaking, 1000 Hz, q: 0.7, gain: 6 dB)")
        XCTAssertEqual("\(EffectSpec.filter(.lowpass, frequency: 800, q: 0.707, gainDB: 0))", "filter(lowpass, 800 Hz, q: 0.707)")
        XCTAssertEqual("\(try EffectSpec.eq(preset: "rock"))", "graphicEQ(preset: \"Rock\")")
        XCTAssertEqual("\(EffectSpec.graphicEQ(gains: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10.5]))",
                       "graphicEQ(gains: 1 2 3 4 5 6 7 8 9 10.5 dB)")
        XCTAssertEqual("\(EffectSpec.delay(time: 0.25, feedback: 0.4, mix: 0.3))", "delay(time: 0.25 s, feedback: 0.4, mix: 0.3)")
        XCTAssertEqual("\(EffectSpec.limiter(ceilingDB: -1, lookahead: 0.005, release: 0.1))",
                       "limiter(ceiling: -1 dB, lookahead: 0.005 s, release: 0.1 s)")
        XCTAssertEqual("\(EffectSpec.reverb(room))", "reverb(preset: \"smallRoom\")")
        XCTAssertEqual("\(EffectSpec.compressor(CompressorSettings(lookahead: 0.002)))",
                       "compressor(thresholdDB: -24, ratio: 4, lookahead: 0.002 s)")

        XCTAssertEqual("\(BiquadCoefficients.identity)", "BiquadCoefficients(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0)")
        XCTAssertEqual("\(BiquadCoefficients(b0: 0.2, b1: 0.4, b2: 0.2, a1: -0.6, a2: 0.3))",
                       "BiquadCoefficients(b0: 0.2, b1: 0.4, b2: 0.2, a1: -0.6, a2: 0.3)")

        XCTAssertEqual("\(Listener())", "Listener(position: (0.0, 0.0, 0.0))")
        XCTAssertEqual("\(Listener(position: Vector3(0, 0, 5), gain: 0.5))", "Listener(position: (0.0, 0.0, 5.0), gain: 0.5)")
        XCTAssertEqual("\(SpatialSource(position: Vector3(3, 0, -2), rolloff: 2, coneInnerAngle: 90, distanceModel: .linear))",
                       "SpatialSource(position: (3.0, 0.0, -2.0), rolloff: 2, coneInnerAngle: 90°, distanceModel: linear)")
        XCTAssertEqual("\(SpatialSettings())", "SpatialSettings(distanceModel: inverseClamped, dopplerFactor: 1, speedOfSound: 343.3)")

        XCTAssertEqual("\(LoggedCommand(frame: 4096, command: .cancelScheduled(id: 3)))", "cancelScheduled command at frame 4096")
        XCTAssertEqual("\(PlaneTestSignal(lane: 1, bus: 2))", "PlaneTestSignal(lane 1 into bus 2, amplitude: 0.5, period: 101 frames)")
        XCTAssertEqual("\(PlaneTestSignal())", "PlaneTestSignal(lane 0 into master, amplitude: 0.5, period: 101 frames)")
    }

    func testEngineValues() throws {
        XCTAssertEqual("\(StreamStatistics(openStreams: 2, openFiles: 1, underruns: 3, missingFrames: 480, ringBytes: 1_500_000, errors: []))",
                       "2 streams, 1 file open, 3 underruns (480 frames missing), 1.5 MB in rings")
        let failed = StreamStatistics(openStreams: 1, openFiles: 1, underruns: 1, missingFrames: 0, ringBytes: 512,
                                      errors: [AudioFileError(.truncated, path: "a.wav", "ends early")], nonFiniteSamples: ["b.wav": 2])
        XCTAssertEqual("\(failed)", "1 stream, 1 file open, 1 underrun (0 frames missing), 512 bytes in rings, 1 error, 1 file with non-finite samples")

        let source = try PCMSource(name: "/generated/synth", sampleRate: 48000, channelCount: 1, frameCount: 96000) { _, _ in 0 }
        XCTAssertEqual("\(source)", "PCMSource \"/generated/synth\": 48 kHz 1 ch 2.000 s")
        XCTAssertEqual("\(StreamFile(pcm: source))", "StreamFile \"synth\": 48 kHz 1 ch 2.000 s (pcm)")

        XCTAssertEqual("\(BusSettings())", "BusSettings(volume: 1, pan: 0)")
        XCTAssertEqual("\(BusSettings(volume: 0.8, pan: -0.5, mute: true, solo: true))", "BusSettings(volume: 0.8, pan: -0.5, muted, soloed)")

        XCTAssertEqual("\(DeviceChange.Kind.reopened)", "reopened")
        XCTAssertEqual("\(DeviceChange(kind: .lost, deviceName: "Built-in Audio", frame: 48000))", "\"Built-in Audio\" lost at frame 48000")
        XCTAssertEqual("\(DeviceChange(kind: .reopened, deviceName: "USB Audio", frame: 48000))", "reopened on \"USB Audio\" at frame 48000")
        XCTAssertEqual("\(DeviceLossPolicy.hold)", "hold")
        XCTAssertEqual("\(DeviceLossPolicy.reopen(deviceName: nil))", "reopen the default device (retry every 0.5 s)")
        XCTAssertEqual("\(DeviceLossPolicy.reopen(deviceName: "USB Audio", retryInterval: 2))", "reopen \"USB Audio\" (retry every 2 s)")

        XCTAssertEqual("\(Sound.Storage.int24)", "int24")
        XCTAssertEqual("\(Sound.StoragePreference.compact)", "compact")

        let changes: [(TrackChange, String)] = [
            (.volume(0.5, ramp: 0.1), "volume 0.5 over 0.1 s"),
            (.pan(-1), "pan -1"),
            (.rate(1.5), "rate 1.5"),
            (.loops(-1), "loops forever"),
            (.loops(3), "loops 3"),
            (.seek(to: 12.5), "seek to 12.5 s"),
            (.pause(), "pause"),
            (.resume(fade: 1), "resume over 1 s"),
            (.stop(fade: 0), "stop over 0 s"),
            (.spatial(nil), "spatial off"),
            (.spatial(SpatialSource()), "spatial SpatialSource(position: (0.0, 0.0, 0.0))"),
            (.position(Vector3(1, 0, -2), ramp: 0.1), "position (1.0, 0.0, -2.0) over 0.1 s"),
            (.velocity(Vector3(4, 0, 0)), "velocity (4.0, 0.0, 0.0)"),
            (.motion(Vector3(1, 0, 0), velocity: Vector3(2, 0, 0)), "motion to (1.0, 0.0, 0.0) velocity (2.0, 0.0, 0.0)"),
            (.direction(Vector3(0, 0, 1), ramp: 0), "direction (0.0, 0.0, 1.0) over 0 s"),
            (.sends([AuxSend(bus: try Bus(2), level: 0.3)]), "sends [AuxSend(to bus 2, level: 0.3)]"),
            (.sendLevel(send: 1, 0.5), "sendLevel of send 1 to 0.5"),
            (.filter(nil), "filter off"),
            (.filter(.lowpass(gainHF: 0.2), ramp: 0.05), "filter VoiceFilter(lowpass, gain: 1, gainHF: 0.2) over 0.05 s"),
        ]
        for (change, text) in changes { XCTAssertEqual("\(change)", text) }

        XCTAssertEqual("\(EffectVariation(pitch: 2, volume: 3))", "EffectVariation(pitch: ±2 semitones, volume: up to -3 dB)")
        XCTAssertEqual("\(EffectVariation())", "EffectVariation(none)")

        let engine = try Engine()
        let events = engine.events(bufferSize: 256)
        XCTAssertEqual("\(events)", "EngineEvents(0 of 256 buffered, 0 dropped)")
        XCTAssertEqual("\(events.makeAsyncIterator())", "EngineEvents.AsyncIterator(0 of 256 buffered)")

        XCTAssertEqual("\(Engine.Configuration())", "Engine.Configuration(48 kHz)")
        var configuration = Engine.Configuration()
        configuration.sampleRate = 44100
        configuration.maxVoices = 64
        configuration.smoothingTime = 0.01
        configuration.resampler = .linear
        XCTAssertEqual("\(configuration)", "Engine.Configuration(44.1 kHz, maxVoices: 64, smoothingTime: 0.01 s, resampler: linear)")
    }

    func testOutputAndSoakValues() {
        XCTAssertEqual("\(OfflineRenderProgress(framesRendered: 48000, totalFrames: 96000))", "48000 of 96000 frames (50%)")
        XCTAssertEqual("\(Dither.tpdf)", "tpdf")
        XCTAssertEqual("\(OutputFormat.Container.aifc)", "aifc")
        XCTAssertEqual("\(OutputFormat.Codec.pcm24)", "pcm24")
        XCTAssertEqual("\(WaveformOverview(columns: 800, frameCount: 96000))",
                       "WaveformOverview(800 columns × 2 ch over 96000 frames, 0 added)")
        XCTAssertEqual("\(OpenALOutput.Configuration())", "OpenALOutput.Configuration(the default device, 4 × 240 frames, "
                       + "maximumLatency: 0.5 s, onDeviceLoss: reopen the default device (retry every 0.5 s))")
        XCTAssertEqual("\(OpenALOutput.Configuration(deviceName: "USB Audio", onDeviceLoss: .hold))",
                       "OpenALOutput.Configuration(\"USB Audio\", 4 × 240 frames, maximumLatency: 0.5 s, onDeviceLoss: hold)")

        var soak = SoakConfiguration(seed: 7, seconds: 60)
        soak.controlThreads = 8
        soak.realTime = true
        XCTAssertEqual("\(soak)", "SoakConfiguration(seed: 7, seconds: 60 s, controlThreads: 8, realTime: true)")
        var counts = SoakCounts()
        (counts.voices, counts.trackStarts, counts.trackEnds) = (12, 12, 11)
        (counts.fired, counts.completions) = (40, 40)
        (counts.scheduled, counts.applied, counts.cancelled) = (30, 28, 2)
        counts.endReasons = [.stopped: 21, .finished: 30]
        XCTAssertEqual("\(counts)", "12 track voices (12 starts, 11 ends), 40 fired (40 completions), 30 scheduled "
                       + "(28 applied, 2 cancelled); ends: finished 30, stopped 21")
        XCTAssertEqual("\(SplitMix64(seed: 42))", "SplitMix64(state: 0x2a)")
    }
}
