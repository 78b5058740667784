import COpenAL
import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleRender
import EnsembleEngine
import EnsembleOutput

/// Ensemble's headphone rendering against OpenAL Soft 1.19's HRTF rendering of the same data set (its loopback
/// device with `ALC_HRTF_SOFT`): a broadband source at 1 m at azimuths 0, ±30, ±90, 135 and 180°. The interaural
/// time difference (the lag that best aligns the ears) within 0.1 ms of OpenAL's and at least 0.5 ms at ±90°;
/// the interaural level difference over 3–8 kHz within 3 dB; front and back spectra at least 3 dB RMS apart over
/// 4–12 kHz. OpenAL Soft reads its configuration once per process and this process's turns HRTF off
/// (`OpenALTestConfig`), so the measurements run in a child process with HRTF allowed.
final class HRTFOpenALTests: XCTestCase {
    static let azimuths: [Double] = [0, 30, -30, 90, -90, 135, 180]
    static let skip = 4800, length = 32768

    func testInterauralCuesMatchOpenALSoftWithHRTF() throws {
        _ = try HRTFRenderTests.hrtf()
        let dir = try TemporaryDirectory()
        let conf = "[general]\nhrtf=true\noutput-limiter=false\ndither=false\nfrequency=48000\n"
        let confPath = try dir.write(Array(conf.utf8), to: "alsoft.conf")
        let test = "EnsembleRenderTests.HRTFOpenALTests/testChildMeasuresBothRenderers"
        let result = try runProcess(CommandLine.arguments[0], [test],
                                    environment: ["ALSOFT_CONF": confPath, "ENSEMBLE_HRTF_CHILD": "1"])
        let output = String(decoding: result.stdout, as: UTF8.self)
        for line in output.split(separator: "\n") where line.hasPrefix("hrtf-vs-openal") { print(line) }
        XCTAssertEqual(result.status, 0, output + result.stderr)
        XCTAssertTrue(output.contains("hrtf-vs-openal azimuth 180"), output)
    }

    /// OpenAL Soft's loopback device with HRTF requested, one looping noise source at `position`.
    final class OpenALHRTF {
        let device: OpaquePointer
        let context: OpaquePointer
        var buffer: ALuint = 0
        let render: LPALCRENDERSAMPLESSOFT

        init(samples: [Float]) throws {
            typealias Open = @convention(c) (UnsafePointer<ALCchar>?) -> OpaquePointer?
            guard let openAddress = alcGetProcAddress(nil, "alcLoopbackOpenDeviceSOFT"),
                  let renderAddress = alcGetProcAddress(nil, "alcRenderSamplesSOFT"),
                  let device = unsafeBitCast(openAddress, to: Open.self)(nil) else {
                throw XCTSkip("OpenAL Soft without ALC_SOFT_loopback")
            }
            render = unsafeBitCast(renderAddress, to: LPALCRENDERSAMPLESSOFT.self)
            let attributes: [ALCint] = [ALC_FREQUENCY, 48000, ALC_FORMAT_CHANNELS_SOFT, ALC_STEREO_SOFT,
                                        ALC_FORMAT_TYPE_SOFT, ALC_FLOAT_SOFT, ALC_HRTF_SOFT, ALC_TRUE, 0]
            guard let context = alcCreateContext(device, attributes) else {
                alcCloseDevice(device)
                throw XCTSkip("OpenAL Soft: no loopback context with HRTF")
            }
            self.device = device
            self.context = context
            alcMakeContextCurrent(context)
            var status: ALCint = 0
            alcGetIntegerv(device, ALC_HRTF_STATUS_SOFT, 1, &status)
            guard status == ALC_HRTF_ENABLED_SOFT else { throw XCTSkip("OpenAL Soft did not enable HRTF (status \(status))") }
            alGenBuffers(1, &buffer)
            samples.withUnsafeBytes { bytes in
                alBufferData(buffer, AL_FORMAT_MONO_FLOAT32, bytes.baseAddress, ALsizei(bytes.count), 48000)
            }
        }

        deinit {
            alDeleteBuffers(1, &buffer)
            alcMakeContextCurrent(nil)
            alcDestroyContext(context)
            alcCloseDevice(device)
        }

        func render(at position: Vector3, frames: Int) -> ([Float], [Float]) {
            var source: ALuint = 0
            alGenSources(1, &source)
            alSourcei(source, AL_BUFFER, ALint(buffer))
            alSourcei(source, AL_LOOPING, AL_TRUE)
            alSource3f(source, AL_POSITION, position.x, position.y, position.z)
            alSourcePlay(source)
            var out = [Float](repeating: 0, count: 2 * frames)
            out.withUnsafeMutableBufferPointer { p in
                var done = 0
                while done < frames {
                    let n = min(1024, frames - done)
                    render(device, p.baseAddress! + 2 * done, ALCsizei(n))
                    done += n
                }
            }
            alSourceStop(source)
            alDeleteSources(1, &source)
            return HRTFRenderTests.split(out)
        }
    }

    /// The child: renders every azimuth with both, prints the figures, asserts the checks.
    func testChildMeasuresBothRenderers() throws {
        guard ProcessInfo.processInfo.environment["ENSEMBLE_HRTF_CHILD"] != nil else {
            throw XCTSkip("the child process of testInterauralCuesMatchOpenALSoftWithHRTF")
        }
        let noise = HRTFRenderTests.noise(48000)
        let openAL = try OpenALHRTF(samples: noise)
        var spectra: [Double: ([Float], [Float])] = [:]
        for azimuth in Self.azimuths {
            let frames = Self.skip + Self.length
            let (al, ar) = openAL.render(at: HRTFRenderTests.at(azimuth: azimuth), frames: frames)
            let (el, er) = try HRTFRenderTests.renderStill(noise, azimuth: azimuth, frames: frames)
            let a = (Array(al[Self.skip...]), Array(ar[Self.skip...])), e = (Array(el[Self.skip...]), Array(er[Self.skip...]))
            let itdOpenAL = Double(HRTFRenderTests.lag(a.0, a.1)) / 48, itd = Double(HRTFRenderTests.lag(e.0, e.1)) / 48
            let ildOpenAL = HRTFMeasure.levelDifference(a.0, a.1, from: 3000, to: 8000)
            let ild = HRTFMeasure.levelDifference(e.0, e.1, from: 3000, to: 8000)
            print(String(format: "hrtf-vs-openal azimuth %.0f: ITD %.3f ms (OpenAL %.3f ms), ILD 3-8 kHz %.2f dB (OpenAL %.2f dB)",
                         azimuth, itd, itdOpenAL, ild, ildOpenAL))
            XCTAssertEqual(itd, itdOpenAL, accuracy: 0.1, "ITD at \(azimuth)°")
            XCTAssertEqual(ild, ildOpenAL, accuracy: 3, "ILD at \(azimuth)°")
            if abs(azimuth) == 90 { XCTAssertGreaterThanOrEqual(abs(itd), 0.5, "ITD at \(azimuth)°") }
            spectra[azimuth] = e.0.count > 0 ? (e.0, a.0) : nil
        }
        let front = spectra[0]!, back = spectra[180]!
        let ours = HRTFMeasure.spectrumDifference(front.0, back.0, from: 4000, to: 12000)
        let theirs = HRTFMeasure.spectrumDifference(front.1, back.1, from: 4000, to: 12000)
        print(String(format: "hrtf-vs-openal front/back 4-12 kHz: %.1f dB RMS (OpenAL %.1f dB RMS)", ours, theirs))
        XCTAssertGreaterThanOrEqual(ours, 3)
    }
}
