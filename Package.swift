// swift-tools-version:6.0
import PackageDescription

// Dependencies point inward: the executable and the agent use the adapters, the adapters use the
// core and one C library each, and the core uses nothing but the standard library.
let package = Package(
    name: "RideGuard",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "rideguard", targets: ["rideguard"]),
        .executable(name: "rideguard-web", targets: ["rideguard-web"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
    ],
    targets: [
        // Pure decisions: detector, trace format, encoders. No I/O, no clocks, no C libraries.
        .target(name: "RideGuardCore"),

        // One system-library target per C library, each with a tiny shim header.
        .systemLibrary(name: "CIIO", pkgConfig: "libiio", providers: [.apt(["libiio-dev"])]),
        .systemLibrary(name: "CGPIOD", pkgConfig: "libgpiod", providers: [.apt(["libgpiod-dev"])]),
        .systemLibrary(name: "CGPS", pkgConfig: "libgps", providers: [.apt(["libgps-dev"])]),
        .systemLibrary(name: "CQRencode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),

        // Thin adapters over the C libraries, and the system calls they share (EINTR, in one place).
        // What an older glibc (bookworm's) lacks that Debian's Swift runtime uses: empty elsewhere.
        .target(name: "GlibcCompat"),
        .target(name: "SystemCalls", dependencies: ["GlibcCompat", .product(name: "SystemPackage", package: "swift-system")]),
        .target(name: "IIOSensor", dependencies: ["RideGuardCore", "CIIO", "SystemCalls"]),
        .target(name: "GPIOLines", dependencies: ["RideGuardCore", "CGPIOD", "SystemCalls"]),
        .target(name: "GPSDClient", dependencies: ["RideGuardCore", "CGPS", "SystemCalls"]),
        .target(name: "QRCode", dependencies: ["RideGuardCore", "CQRencode"]),
        .target(name: "MQTTLink", dependencies: ["CMosquitto", "SystemCalls"]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "OsmAnd", dependencies: ["CCurl", "RideGuardCore"]),
        .target(name: "SerialModem", dependencies: ["RideGuardCore", "SystemCalls", .product(name: "Logging", package: "swift-log")]),
        .target(name: "Storage", dependencies: ["RideGuardCore", "CSQLite",
                                                .product(name: "SystemPackage", package: "swift-system")]),

        // Labelled, physically consistent traces for evaluating the detector (`rideguard synth`).
        .target(name: "ScenarioSynth", dependencies: ["RideGuardCore"]),

        // Wiring, file I/O and services.
        // Offline tools: replay, the HTML report, the detector's evaluation on labelled traces.
        .target(name: "DetectorLab", dependencies: ["RideGuardCore", "ScenarioSynth", "Storage", "SystemCalls", .product(name: "SystemPackage", package: "swift-system")]),

        .target(name: "RideGuardAgent", dependencies: ["RideGuardCore", "IIOSensor", "GPIOLines", "GPSDClient", "SerialModem", "Storage", "MQTTLink", "OsmAnd", "SystemCalls", .product(name: "SystemPackage", package: "swift-system"),
                                                    "CYAML",
                                                    .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                                                    .product(name: "Logging", package: "swift-log")]),

        .executableTarget(
            name: "rideguard",
            dependencies: [
                "RideGuardAgent", "SystemCalls", "DetectorLab", "ScenarioSynth", "GPSDClient", "SerialModem", "Storage", "IIOSensor", "QRCode", "MQTTLink",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),

        // The rider's phone as a screen (`rideguard web`): pages, pairing, sessions, and the small
        // bounded HTTP/1.1 server that carries them (`WebServer`); served by a program of its own,
        // so that the page's load never comes near the agent.
        .target(name: "WebUI", dependencies: ["RideGuardAgent", "DetectorLab", "Storage", "QRCode", "SystemCalls",
                                               .product(name: "SystemPackage", package: "swift-system")]),
        .executableTarget(name: "rideguard-web", dependencies: ["WebUI", "RideGuardAgent", "Storage", "SystemCalls",
                                                                .product(name: "ArgumentParser", package: "swift-argument-parser")]),

        // The parsers that take outside input, fuzzed: a seeded run in the tests, libFuzzer in scripts/fuzz.sh.
        .target(name: "Fuzzing", dependencies: ["RideGuardCore", "RideGuardAgent", "ScenarioSynth"]),
        .executableTarget(name: "rideguard-fuzz", dependencies: ["Fuzzing"]),

        // Per-sample cost of the detector and the trace parser: swift run -c release rideguard-bench
        .executableTarget(name: "rideguard-bench", dependencies: ["RideGuardCore", "ScenarioSynth", "Storage"]),

        .testTarget(name: "RideGuardCoreTests", dependencies: ["RideGuardCore", "ScenarioSynth"]),
        .testTarget(name: "AdapterTests", dependencies: ["IIOSensor", "GPIOLines", "GPSDClient", "SystemCalls",
                                                     .product(name: "SystemPackage", package: "swift-system")]),
        .testTarget(name: "RideGuardAgentTests", dependencies: ["RideGuardAgent", "DetectorLab", "rideguard", "Fuzzing", "MQTTLink", "OsmAnd", "WebUI", "rideguard-web",
                                                            .product(name: "Logging", package: "swift-log")]),
    ],
    swiftLanguageModes: [.v6]
)
