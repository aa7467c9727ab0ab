// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import CQRencode
import RideGuardCore

/// A QR code made by libqrencode: the text in UTF-8, error correction M.
package enum QRCode {
    package struct TooLong: Error, CustomStringConvertible, Sendable {
        package var bytes: Int
        package var description: String { "\(bytes) bytes do not fit in a QR code: shorten the medical note or the names" }
    }

    package static func encode(_ text: String) throws(TooLong) -> QRMatrix {
        let bytes = Array(text.utf8)
        guard let code = rg_qr_encode_utf8(bytes, Int32(bytes.count)) else { throw TooLong(bytes: bytes.count) }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        // Bit 0 of each byte is the module's colour (1: dark); the other bits say what it is part of.
        let modules = (0..<width * width).map { code.pointee.data[$0] & 1 == 1 }
        return QRMatrix(width: width, modules: modules)
    }
}
