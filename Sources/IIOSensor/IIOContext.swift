// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import CIIO
import SystemPackage

/// A failed libiio call: what we tried, on what, and the errno it gave.
package struct IIOError: Error, CustomStringConvertible, Sendable {
    package var operation: String
    package var target: String
    package var errno: Errno

    package var description: String {
        "\(operation) \(target): \(errno) (errno \(errno.rawValue))"
    }
}

/// An open libiio context (`local:`, `ip:host[:port]`, …): the devices of one machine.
/// Used by one thread at a time (the sampler's), which owns it.
package final class IIOContext {
    let pointer: OpaquePointer
    package let uri: String

    /// What a failure to open says it was doing.
    package static let openingOperation = "opening IIO context"

    /// Wraps `iio_create_context_from_uri`.
    package init(uri: String) throws(IIOError) {
        errno = 0
        guard let context = iio_create_context_from_uri(uri) else {
            throw IIOError(operation: Self.openingOperation, target: uri, errno: Errno(rawValue: errno == 0 ? ENOENT : errno))
        }
        pointer = context
        self.uri = uri
    }

    deinit {
        iio_context_destroy(pointer)
    }

    /// The library's version, e.g. "0.24".
    package static var libraryVersion: String {
        var major: UInt32 = 0, minor: UInt32 = 0
        var tag = [CChar](repeating: 0, count: 8)
        iio_library_get_version(&major, &minor, &tag)
        return "\(major).\(minor)"
    }

    /// Names of the devices in the context (`mpu6050`, `lsm6dsl_accel`, …).
    package var deviceNames: [String] {
        (0..<iio_context_get_devices_count(pointer)).compactMap { index in
            guard let device = iio_context_get_device(pointer, index), !iio_device_is_trigger(device) else { return nil }
            if let name = iio_device_get_name(device) { return String(cString: name) }
            return iio_device_get_id(device).map { String(cString: $0) }
        }
    }
}
