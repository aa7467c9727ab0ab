// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import CGPIOD
import SystemPackage

/// A failed GPIO request: which line or chip, what for, and the errno.
package struct GPIOError: Error, CustomStringConvertible, Sendable {
    package var operation: String
    package var line: String
    package var errno: Errno

    package var description: String {
        let reason = errno == .noSuchFileOrDirectory ? "no such chip or line" : errno.description
        return "\(operation) \(line): \(reason) (errno \(errno.rawValue))"
    }
}

/// Where a line is: by its name (`GPIO17`, from the device tree), or by chip and offset.
/// The chip is a path, a chip name or a label (`pinctrl-rp1`), never a bare number.
package enum GPIOLineAddress: Equatable, Sendable, CustomStringConvertible {
    case named(String)
    case chip(String, offset: UInt32)

    /// As the configuration writes it: "gpiochip0:17" (a chip and an offset), or a line's name ("GPIO17").
    package init(_ text: String) {
        let parts = text.split(separator: ":")
        if parts.count == 2, let offset = UInt32(parts[1]) {
            self = .chip(String(parts[0]), offset: offset)
        } else {
            self = .named(text)
        }
    }

    package var description: String {
        switch self {
        case .named(let name): "line \(name)"
        case .chip(let chip, let offset): "line \(offset) of chip \(chip)"
        }
    }
}

/// One requested GPIO line, released when the value goes away. Works with libgpiod 1.6 and 2.x.
/// Safe to share between threads: libgpiod calls on one request do not mutate shared Swift state, and
/// the owner uses an output line from one task and an input line from the watcher thread only.
package final class GPIOLine: @unchecked Sendable {
    let handle: UnsafeMutablePointer<rg_gpio_line>
    package let address: GPIOLineAddress

    /// "1.6.3" or "2.1.3": the libgpiod this binary runs with.
    package static var libraryVersion: String { String(cString: rg_gpiod_version()) }
    /// 1 or 2: the libgpiod API this binary was compiled against.
    package static var apiMajor: Int { Int(rg_gpiod_api_major()) }

    package enum Bias: Int32, Sendable { case asIs = 0, pullUp = 1, pullDown = 2, disabled = 3 }

    /// Requests an output line (buzzer, LED) driven to `initial`.
    package static func output(_ address: GPIOLineAddress, consumer: String = "rideguard", initial: Bool = false,
                              activeLow: Bool = false) throws(GPIOError) -> GPIOLine {
        try GPIOLine(address, consumer: consumer, output: true, initial: initial, activeLow: activeLow,
                     bias: .asIs, debounceMicroseconds: 0)
    }

    /// Requests an input line with both-edge events (the button).
    package static func input(_ address: GPIOLineAddress, consumer: String = "rideguard", activeLow: Bool = true,
                             bias: Bias = .pullUp, debounceMicroseconds: UInt = 10_000) throws(GPIOError) -> GPIOLine {
        try GPIOLine(address, consumer: consumer, output: false, initial: false, activeLow: activeLow,
                     bias: bias, debounceMicroseconds: debounceMicroseconds)
    }

    private init(_ address: GPIOLineAddress, consumer: String, output: Bool, initial: Bool, activeLow: Bool,
                 bias: Bias, debounceMicroseconds: UInt) throws(GPIOError) {
        errno = 0
        let opened: UnsafeMutablePointer<rg_gpio_line>?
        switch address {
        case .named(let name):
            opened = rg_gpio_line_open(nil, name, 0, consumer, output, initial ? 1 : 0, activeLow, bias.rawValue,
                                       debounceMicroseconds)
        case .chip(let chip, let offset):
            opened = rg_gpio_line_open(chip, nil, offset, consumer, output, initial ? 1 : 0, activeLow, bias.rawValue,
                                       debounceMicroseconds)
        }
        guard let opened else {
            throw GPIOError(operation: output ? "requesting output" : "requesting input", line: address.description,
                            errno: Errno(rawValue: errno == 0 ? ENOENT : errno))
        }
        handle = opened
        self.address = address
    }

    deinit {
        rg_gpio_line_close(handle)
    }

    /// Drives an output line (logical level: active or not).
    package func set(_ active: Bool) throws(GPIOError) {
        guard rg_gpio_line_set(handle, active ? 1 : 0) == 0 else {
            throw GPIOError(operation: "setting", line: address.description, errno: Errno(rawValue: errno))
        }
    }

    /// The line's logical level now (an input reads the pin: a pressed button is active).
    package func isActive() throws(GPIOError) -> Bool {
        let value = rg_gpio_line_get(handle)
        guard value >= 0 else { throw GPIOError(operation: "reading", line: address.description, errno: Errno(rawValue: errno)) }
        return value == 1
    }
}
