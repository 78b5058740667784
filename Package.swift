// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Ensemble",
    products: [
        .library(name: "Ensemble", targets: ["Ensemble"]),
        .executable(name: "ensemble", targets: ["ensemble"]),
        .executable(name: "ensemble-bench", targets: ["ensemble-bench"]),
        // An application links it (debug builds) to have its own effects and generators checked for allocation on
        // the render thread: it interposes `malloc` in that process ("Custom effects and generated sources").
        .library(name: "EnsembleAllocationCheck", targets: ["CAllocationCounter"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(name: "COpenAL", pkgConfig: "openal", providers: [.apt(["libopenal-dev"])]),
        .systemLibrary(name: "CSndfile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CMpg123", pkgConfig: "libmpg123", providers: [.apt(["libmpg123-dev"])]),
        // SOFA (AES69) HRTF files for headphone rendering.
        .systemLibrary(name: "CMySofa", pkgConfig: "libmysofa", providers: [.apt(["libmysofa-dev"])]),
        // The stages, each importing only the ones before it (file → decoder → sound → voice → mixer → output):
        // containers, codecs and the push parser; HRTF data sets (OpenAL Soft's .mhr, SOFA through libmysofa).
        .target(name: "EnsembleFormats", dependencies: ["CSndfile", "CMpg123", "CMySofa"]),
        // The render side: voices, resampling, 3D gains, commands, lanes and workers, buses and effects, and the
        // value types that describe them.
        .target(
            name: "EnsembleRender",
            dependencies: ["EnsembleFormats", "CFloatControl", "CSincKernel", "CMixKernel", "CWorkerSync", "CRenderMath"]
        ),
        // The control side: Engine, Track, sounds and their loader, events and the clock.
        .target(name: "EnsembleEngine", dependencies: ["EnsembleFormats", "EnsembleRender", "CSndfile"]),
        // Where the mix goes: OpenAL devices and streams, loopback, offline rendering, file writers.
        .target(name: "EnsembleOutput", dependencies: ["EnsembleFormats", "EnsembleRender", "EnsembleEngine", "COpenAL", "CSndfile"]),
        // Scene files: the model, validation, the timeline, scheduling on an engine, the plot.
        .target(name: "EnsembleScene", dependencies: ["EnsembleFormats", "EnsembleRender", "EnsembleEngine", "EnsembleOutput"]),
        // The library product: re-exports every stage, and holds the DocC catalogue.
        .target(
            name: "Ensemble",
            dependencies: ["EnsembleFormats", "EnsembleRender", "EnsembleEngine", "EnsembleOutput", "EnsembleScene"]
        ),
        // Flush-to-zero around rendering (header-only: static inline MXCSR / FPCR access).
        .target(name: "CFloatControl"),
        // The command line's quiet audio back ends (alsa-lib's error printing; see `BackendLogs.h`).
        .target(name: "CBackendLogs", linkerSettings: [.linkedLibrary("dl")]),
        .target(name: "CRenderMath", linkerSettings: [.linkedLibrary("m")]),
        // The sinc resampler's inner products: eight-lane FMA on CPUs with AVX2, the same bits elsewhere.
        .target(name: "CSincKernel"),
        // The step-1 copy with gains: eight lanes on CPUs with AVX2, the same bits elsewhere.
        .target(name: "CMixKernel"),
        // Futex wait/wake and the spin hint for the render worker pool (`renderThreads` > 1).
        .target(name: "CWorkerSync"),
        .executableTarget(
            name: "ensemble",
            dependencies: ["Ensemble", "CBackendLogs", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // The benchmark program (Benchmarks/README.md): `swift run -c release ensemble-bench [--quick]`.
        // The game-loop example of the "From a game loop" article: built and run by the tests, imports Ensemble only.
        .executableTarget(name: "example-game-loop", dependencies: ["Ensemble"], path: "Sources/Examples/GameLoop"),
        // The custom-effect example of the "Custom effects and generated sources" article: built and run by the tests, imports
        // Ensemble only.
        // It links the allocation check an application would, so `--allocating` shows the debug-build report.
        .executableTarget(name: "example-ring-modulator", dependencies: ["Ensemble", "CAllocationCounter"],
                          path: "Sources/Examples/RingModulator"),
        // The generated-source example of the same article: built and run by the tests, imports Ensemble only.
        .executableTarget(name: "example-engine-tone", dependencies: ["Ensemble"], path: "Sources/Examples/EngineTone"),
        .executableTarget(
            name: "ensemble-bench",
            dependencies: ["Ensemble", "EnsembleSoak", "COpenAL", "CSndfile", "CAllocationCounter", "CSincKernel", "CBenchProbe"],
            path: "Benchmarks/ensemble-bench"
        ),
        // The benchmark program's machine probes (vector-load throughput for the sinc kernel's roofline).
        .target(name: "CBenchProbe", path: "Benchmarks/CBenchProbe"),
        // The soak driver (random multi-threaded traffic, checked), shared by SoakTests and `ensemble-bench --soak`.
        .target(name: "EnsembleSoak", dependencies: ["Ensemble", "CAllocationCounter"]),
        // Counts heap allocations per thread (interposes `malloc`): the tests prove the render path allocates nothing
        // with it, the benchmark and soak count with it, and an application's debug build links it as the
        // `EnsembleAllocationCheck` product. The library targets never depend on it.
        .target(name: "CAllocationCounter"),
        // Fuzz targets (CONTRIBUTING.md, "Fuzzing"): shared by the fuzzer/replayer program and FuzzRegressionTests.
        .target(name: "EnsembleFuzzTargets", dependencies: ["Ensemble"], path: "Tests/Fuzz/Harness"),
        // `ensemble-fuzz TARGET FILE...` replays inputs; Tests/Fuzz/run.sh builds it as a libFuzzer program.
        .executableTarget(name: "ensemble-fuzz", dependencies: ["EnsembleFuzzTargets"], path: "Tests/Fuzz/ensemble-fuzz"),
        // What the test targets share: signals and their measurements, renders, events, OpenAL peers, paths.
        .target(
            name: "EnsembleTestSupport",
            dependencies: ["Ensemble", "EnsembleSoak", "CAllocationCounter", "COpenAL"],
            path: "Tests/Support"
        ),
        // One test target per stage (and one for the command line), as the sources are laid out.
        .testTarget(name: "EnsembleFormatsTests", dependencies: ["Ensemble", "EnsembleTestSupport", "EnsembleSoak", "CAllocationCounter", "CFloatControl", "CSincKernel", "CMixKernel", "EnsembleFuzzTargets"]),
        .testTarget(name: "EnsembleRenderTests", dependencies: ["Ensemble", "EnsembleTestSupport", "EnsembleSoak", "CAllocationCounter", "CFloatControl", "CSincKernel", "CMixKernel", "EnsembleFuzzTargets"]),
        .testTarget(name: "EnsembleEngineTests", dependencies: ["Ensemble", "EnsembleTestSupport", "EnsembleSoak", "CAllocationCounter", "CFloatControl", "CSincKernel", "CMixKernel", "EnsembleFuzzTargets"]),
        .testTarget(name: "EnsembleOutputTests", dependencies: ["Ensemble", "EnsembleTestSupport", "EnsembleSoak", "CAllocationCounter", "CFloatControl", "CSincKernel", "CMixKernel", "EnsembleFuzzTargets"]),
        .testTarget(name: "EnsembleSceneTests", dependencies: ["Ensemble", "EnsembleTestSupport", "EnsembleSoak", "CAllocationCounter", "CFloatControl", "CSincKernel", "CMixKernel", "EnsembleFuzzTargets"]),
        .testTarget(name: "EnsembleCLITests", dependencies: ["Ensemble", "EnsembleTestSupport", "EnsembleSoak", "CAllocationCounter", "CFloatControl", "CSincKernel", "CMixKernel", "EnsembleFuzzTargets"]),
    ]
)
