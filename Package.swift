// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Ensemble",
    products: [
        .library(name: "Ensemble", targets: ["Ensemble"]),
        .executable(name: "ensemble", targets: ["ensemble"]),
        .executable(name: "ensemble-bench", targets: ["ensemble-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(name: "COpenAL", pkgConfig: "openal", providers: [.apt(["libopenal-dev"])]),
        .systemLibrary(name: "CSndfile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CMpg123", pkgConfig: "libmpg123", providers: [.apt(["libmpg123-dev"])]),
        .target(
            name: "Ensemble",
            dependencies: ["COpenAL", "CSndfile", "CMpg123", "CSincKernel"]
        ),
        // The sinc resampler's inner products: eight-lane FMA on CPUs with AVX2, the same bits elsewhere.
        .target(name: "CSincKernel"),
        .executableTarget(
            name: "ensemble",
            dependencies: ["Ensemble", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // The benchmark program (Benchmarks/README.md): `swift run -c release ensemble-bench [--quick]`.
        .executableTarget(
            name: "ensemble-bench",
            dependencies: ["Ensemble", "COpenAL", "CAllocationCounter"],
            path: "Benchmarks/ensemble-bench"
        ),
        // Test-only (and the benchmark): counts heap allocations per thread so a test can prove the render path allocates nothing.
        .target(name: "CAllocationCounter"),
        .testTarget(
            name: "EnsembleTests",
            dependencies: ["Ensemble", "CAllocationCounter", "CSincKernel"]
        ),
    ]
)
