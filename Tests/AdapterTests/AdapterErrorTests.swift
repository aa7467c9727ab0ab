// SPDX-License-Identifier: Apache-2.0
import GPIOLines
import GPSDClient
import IIOSensor
import Testing

/// What this machine allows without hardware: each library loads, and a missing device gives an
/// error that names it instead of crashing.
@Suite struct AdapterErrorTests {
    @Test func libgpiodVersionMatchesTheHeaderItWasBuiltAgainst() {
        #expect(GPIOLine.libraryVersion.hasPrefix("\(GPIOLine.apiMajor)."))
    }

    @Test func missingGPIOLineIsNamed() {
        #expect {
            _ = try GPIOLine.output(.named("RIDEGUARD_NO_SUCH_LINE"))
        } throws: { error in
            "\(error)".contains("line RIDEGUARD_NO_SUCH_LINE") && "\(error)".contains("no such chip or line")
        }
    }

    @Test func missingGPIOChipIsNamed() {
        #expect {
            _ = try GPIOLine.input(.chip("/dev/gpiochip99", offset: 17))
        } throws: { error in
            "\(error)".contains("line 17 of chip /dev/gpiochip99")
        }
    }

    @Test func unreachableIIODaemonIsNamed() {
        #expect(IIOContext.libraryVersion.hasPrefix("0."))
        #expect {
            _ = try IIOContext(uri: "ip:127.0.0.1:9")
        } throws: { error in
            "\(error)".contains("ip:127.0.0.1:9")
        }
    }

    @Test func unreachableGPSDIsNamed() {
        #expect(GPSDConnection.apiMajor >= 11)
        #expect {
            _ = try GPSDConnection(host: "127.0.0.1", port: "9")
        } throws: { error in
            "\(error)".contains("gpsd at 127.0.0.1:9")
        }
    }
}
