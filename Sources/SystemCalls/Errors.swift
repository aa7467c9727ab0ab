// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// An error in words for a person: Foundation's file errors by their system error ("No such file
/// or directory"), which is what they carry; anything else as it describes itself.
package func explain(_ error: any Error) -> String {
    if let error = error as? CocoaError {
        if let underlying = error.underlying as? POSIXError {
            return String(cString: strerror(underlying.code.rawValue))
        }
        if error.code == .fileReadInapplicableStringEncoding { return "not UTF-8 text" }
        return "error \(error.code.rawValue)"
    }
    if let error = error as? POSIXError { return String(cString: strerror(error.code.rawValue)) }
    return "\(error)"
}
