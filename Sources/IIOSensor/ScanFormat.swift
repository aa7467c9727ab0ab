// SPDX-License-Identifier: Apache-2.0

/// A scan element's format as the kernel writes it in `scan_elements/<channel>_type`
/// (Documentation/ABI/testing/sysfs-bus-iio): `[be|le]:[s|u]bits/storagebits[Xrepeat]>>shift`, such
/// as `le:s16/16>>0` or `be:s12/16>>4`.
package struct ScanFormat: Equatable, Sendable {
    package let bigEndian: Bool
    package let signed: Bool
    package let bits: Int
    package let storageBits: Int
    package let repeats: Int
    package let shift: Int

    package init?(_ text: String) {
        let t = text.split(whereSeparator: { $0.isWhitespace }).first ?? ""
        let parts = t.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, parts[0] == "be" || parts[0] == "le", let sign = parts[1].first, "sSuU".contains(sign) else { return nil }
        bigEndian = parts[0] == "be"
        signed = sign == "s" || sign == "S"
        let rest = parts[1].dropFirst()
        let shiftSplit = rest.split(separator: ">", omittingEmptySubsequences: true)
        guard shiftSplit.count == 2, rest.contains(">>"), let shift = Int(shiftSplit[1]) else { return nil }
        let sizes = shiftSplit[0].split(separator: "/")
        guard sizes.count == 2, let bits = Int(sizes[0]) else { return nil }
        let storage = sizes[1].split(separator: "X")
        guard let storageBits = Int(storage[0]), [8, 16, 32, 64].contains(storageBits), bits >= 1, bits <= storageBits, shift >= 0,
              shift + bits <= storageBits else { return nil }
        let repeats = storage.count == 2 ? Int(storage[1]) : 1
        guard let repeats, repeats >= 1 else { return nil }
        self.bits = bits
        self.storageBits = storageBits
        self.repeats = repeats
        self.shift = shift
    }

    /// The bytes it takes in a scan, which is also its alignment there.
    package var bytes: Int { storageBits / 8 * repeats }

    /// The value of its first element at `offset` of `scan`: stored in its byte order, shifted right,
    /// `bits` wide, sign-extended where signed.
    package func value(in scan: UnsafeRawBufferPointer, at offset: Int) -> Int64 {
        let size = storageBits / 8
        var stored: UInt64 = 0
        for i in 0..<size {
            let byte = UInt64(scan[offset + (bigEndian ? i : size - 1 - i)])
            stored = stored << 8 | byte
        }
        var value = stored >> UInt64(shift)
        if bits < 64 { value &= (UInt64(1) << UInt64(bits)) - 1 }
        guard signed, bits < 64 else { return Int64(bitPattern: value) }
        let unused = UInt64(64 - bits)
        return Int64(bitPattern: value << unused) >> Int64(unused)
    }
}

/// Where each enabled element sits in one scan, as the kernel lays them out
/// (iio_compute_scan_bytes): in index order, each aligned to its own size, the whole scan padded to
/// its largest element.
package struct ScanLayout: Equatable, Sendable {
    /// Each element's offset, in the order given.
    package let offsets: [Int]
    package let size: Int

    /// `elements`: the index and format of each enabled element, in any order.
    package init(_ elements: [(index: Int, format: ScanFormat)]) {
        let order = elements.indices.sorted { elements[$0].index < elements[$1].index }
        var offsets = [Int](repeating: 0, count: elements.count)
        var bytes = 0, largest = 1
        for i in order {
            let length = elements[i].format.bytes
            bytes = (bytes + length - 1) / length * length
            offsets[i] = bytes
            bytes += length
            largest = max(largest, length)
        }
        self.offsets = offsets
        size = (bytes + largest - 1) / largest * largest
    }
}
