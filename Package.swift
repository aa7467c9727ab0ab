// swift-tools-version:6.0
// SPDX-License-Identifier: Apache-2.0
import PackageDescription

// Dependencies point inward: the executable and the agent use the adapters, the adapters use the
// core and one C library each, and the core uses nothing but the standard library.
let package = Package(
    name: "RideGuard",
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
        // One SMBus register read through /dev/i2c-N (the kernel's i2c-dev UAPI), for the doctor.
        .target(name: "CI2CBus"),
        .target(name: "SystemCalls", dependencies: ["GlibcCompat", .product(name: "SystemPackage", package: "swift-system")]),
        // The real clock (monotonic sleeps) and times as people read them (the C library's time zone).
        .target(name: "SystemTime", dependencies: ["RideGuardCore"]),
        // The Raspberry Pi's supply voltage monitor (hwmon's rpi_volt).
        .target(name: "PiSupply", dependencies: ["RideGuardCore", .product(name: "SystemPackage", package: "swift-system")]),
        .target(name: "IIOSensor", dependencies: ["RideGuardCore", "CIIO", "SystemCalls", .product(name: "SystemPackage", package: "swift-system")]),
        .target(name: "GPIOLines", dependencies: ["CGPIOD", "RideGuardCore", "SystemCalls", .product(name: "SystemPackage", package: "swift-system")]),
        .target(name: "GPSDClient", dependencies: ["RideGuardCore", "CGPS", "SystemCalls"]),
        .target(name: "QRCode", dependencies: ["RideGuardCore", "CQRencode"]),
        .target(name: "MQTTLink", dependencies: ["CMosquitto", "RideGuardCore", "SystemCalls"]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "OsmAnd", dependencies: ["CCurl", "RideGuardCore"]),
        .target(name: "SerialModem", dependencies: ["RideGuardCore", "SystemCalls", .product(name: "SystemPackage", package: "swift-system"),
                                                    .product(name: "Logging", package: "swift-log")]),
        .target(name: "Storage", dependencies: ["RideGuardCore", "CSQLite", "SystemCalls", "SystemTime",
                                                .product(name: "SystemPackage", package: "swift-system")]),

        // Labelled, physically consistent traces for evaluating the detector (`rideguard synth`).
        .target(name: "ScenarioSynth", dependencies: ["RideGuardCore"]),

        // Offline tools: replay, the HTML report, the detector's evaluation on labelled traces.
        .target(name: "DetectorLab", dependencies: ["RideGuardCore", "ScenarioSynth", "Storage", "SystemCalls"]),

        // How every program of ours writes its lines (a terminal's, journald's).
        .target(name: "RideGuardLog", dependencies: ["RideGuardCore", .product(name: "Logging", package: "swift-log"),
                                                  .product(name: "SystemPackage", package: "swift-system")]),
        // How other programs reach the running agent: the control socket's protocol (its client and
        // its server) and where the phone's page is served. No C library.
        .target(name: "AgentControl", dependencies: ["RideGuardCore", "SystemCalls",
                                                  .product(name: "SystemPackage", package: "swift-system")]),
        // The configuration file (YAML through libyaml, its only user) and its example.
        .target(name: "RideGuardConfig", dependencies: ["RideGuardCore", "CYAML", "SystemCalls",
                                                     .product(name: "SystemPackage", package: "swift-system")]),
        // `rideguard doctor` and the page's checks: every part, in the order the agent starts.
        // No IIO or GPIO library: the page's program runs these checks too, and sees no devices.
        .target(name: "RideGuardDoctor", dependencies: ["RideGuardCore", "AgentControl", "RideGuardConfig",
                                                     "GPSDClient", "SerialModem", "Storage", "SystemCalls", "SystemTime", "PiSupply", "RideGuardLog",
                                                     .product(name: "Logging", package: "swift-log"),
                                                     .product(name: "SystemPackage", package: "swift-system")]),
        // The doctor's checks that open the IMU and the GPIO lines themselves, and look on the I²C bus.
        .target(name: "DoctorHardware", dependencies: ["RideGuardDoctor", "RideGuardCore", "IIOSensor", "GPIOLines", "CI2CBus", "Storage"]),
        // The agent: its services around the emergency workflow, and their wiring.
        .target(name: "RideGuardAgent", dependencies: ["RideGuardCore", "AgentControl", "IIOSensor", "GPIOLines", "GPSDClient", "SerialModem",
                                                    "Storage", "MQTTLink", "OsmAnd", "SystemCalls", "SystemTime", "PiSupply",
                                                    .product(name: "SystemPackage", package: "swift-system"),
                                                    .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                                                    .product(name: "Logging", package: "swift-log")]),

        // The command line, a library so that its parsing and output are tested in-process.
        .target(
            name: "RideGuardCommands",
            dependencies: [
                "RideGuardCore", "RideGuardAgent", "AgentControl", "RideGuardConfig", "RideGuardDoctor", "DoctorHardware", "RideGuardLog", "SystemCalls", "SystemTime", "DetectorLab", "ScenarioSynth",
                "GPSDClient", "SerialModem", "Storage", "IIOSensor", "GPIOLines", "QRCode", "MQTTLink",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .executableTarget(name: "rideguard", dependencies: ["RideGuardCommands"]),

        // The rider's phone as a screen (`rideguard web`): pages, pairing, sessions, and the small
        // bounded HTTP/1.1 server that carries them (`WebServer`); served by a program of its own,
        // so that the page's load never comes near the agent.
        .target(name: "HTTPRequests"),
        .target(name: "WebUI", dependencies: ["HTTPRequests", "AgentControl", "RideGuardCore", "RideGuardDoctor", "DetectorLab", "Storage", "QRCode", "SystemCalls", "SystemTime",
                                               .product(name: "SystemPackage", package: "swift-system")]),
        .executableTarget(name: "rideguard-web", dependencies: ["WebUI", "AgentControl", "RideGuardConfig", "RideGuardCore", "Storage", "SystemCalls",
                                                                .product(name: "ArgumentParser", package: "swift-argument-parser")]),

        // The parsers that take outside input, fuzzed: a seeded run in the tests, libFuzzer in scripts/fuzz.sh.
        .target(name: "Fuzzing", dependencies: ["RideGuardCore", "RideGuardConfig", "ScenarioSynth", "HTTPRequests"]),
        .executableTarget(name: "rideguard-fuzz", dependencies: ["Fuzzing"]),

        // Per-sample cost of the detector and the trace parser: swift run -c release rideguard-bench
        .executableTarget(name: "rideguard-bench", dependencies: ["RideGuardCore", "ScenarioSynth", "Storage"]),

        .testTarget(name: "RideGuardCoreTests", dependencies: ["RideGuardCore", "ScenarioSynth"]),
        // What the tests share, in layers as swift-nio's NIOTestUtils: the adapters' peers (the fake
        // gpsd, iiod, modem and Traccar server, Mosquitto and gpsfake run for a test), the manual
        // clock and the one-thread executor, scratch folders; nothing above the adapters they fake.
        .target(name: "RideGuardTestSupport", dependencies: ["RideGuardCore", "GPSDClient", "Storage",
                                                          .product(name: "Logging", package: "swift-log")],
                path: "Tests/RideGuardTestSupport"),
        // The fake modem as a program, for a machine outside the tests' process: the VM tests give
        // its pseudo-terminal to the guest as a USB serial adapter.
        .executableTarget(name: "rideguard-fake-modem", dependencies: ["RideGuardTestSupport"], path: "Tests/rideguard-fake-modem"),
        // Above it, the agent's own: an agent run in-process, a command line parsed and run in-process.
        .target(name: "AgentTestSupport", dependencies: ["RideGuardTestSupport", "RideGuardAgent", "RideGuardCommands", "RideGuardCore", "Storage",
                                                      .product(name: "Logging", package: "swift-log")],
                path: "Tests/AgentTestSupport"),
        // Each adapter on its real peer (a fake iiod, gpsd under gpsfake, a modem on a pseudo-terminal,
        // Mosquitto, SQLite on disk), without the agent.
        .testTarget(name: "AdapterTests", dependencies: ["RideGuardTestSupport", "IIOSensor", "GPIOLines", "GPSDClient", "SerialModem", "Storage", "MQTTLink",
                                                     "HTTPRequests", "RideGuardCore", "SystemCalls", "SystemTime",
                                                     .product(name: "SystemPackage", package: "swift-system")]),
        .testTarget(name: "RideGuardAgentTests", dependencies: ["RideGuardTestSupport", "AgentTestSupport", "RideGuardAgent", "AgentControl", "RideGuardConfig", "RideGuardDoctor", "DoctorHardware", "RideGuardLog", "RideGuardCore", "IIOSensor", "SerialModem", "Storage", "rideguard", "Fuzzing", "HTTPRequests", "SystemCalls", "SystemTime", "MQTTLink", "OsmAnd", "WebUI", "rideguard-web",
                                                            .product(name: "Logging", package: "swift-log"),
                                                            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")]),
    ],
    swiftLanguageModes: [.v6]
)
