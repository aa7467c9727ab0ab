/// SMS-SUBMIT in PDU mode (3GPP TS 23.040): what `AT+CMGS=<length>` takes after the prompt.
public enum SMSPDU {
    /// One part, ready for the modem: `AT+CMGS=<tpduLength>`, then `hex` and Ctrl-Z.
    public struct Part: Equatable, Sendable {
        /// The PDU in hex, starting with `00` (use the SMSC stored in the SIM, AT+CSCA).
        public var hex: String
        /// Octets after the SMSC field, the number AT+CMGS wants.
        public var tpduLength: Int
    }

    /// Encodes `text` for `number` (`+` and digits for international, digits alone for national),
    /// in as many parts as it needs; parts of one message share `reference`.
    public static func encode(_ text: String, to number: String, reference: UInt8,
                              validityPeriod: UInt8? = nil) -> [Part] {
        let sms = SMSText(text)
        let total = sms.parts.count
        return sms.parts.enumerated().map { index, units in
            var tpdu: [UInt8] = []
            var firstOctet: UInt8 = 0x01                    // SMS-SUBMIT
            if validityPeriod != nil { firstOctet |= 0x10 }  // relative validity period present
            if total > 1 { firstOctet |= 0x40 }              // user data header present
            tpdu.append(firstOctet)
            tpdu.append(0x00)                                // message reference: set by the modem
            tpdu += address(number)
            tpdu.append(0x00)                                // protocol identifier
            tpdu.append(sms.encoding == .gsm7 ? 0x00 : 0x08) // data coding scheme
            if let validityPeriod { tpdu.append(validityPeriod) }
            let header: [UInt8] = total > 1 ? [0x05, 0x00, 0x03, reference, UInt8(total), UInt8(index + 1)] : []
            switch sms.encoding {
            case .gsm7:
                let headerSeptets = (header.count * 8 + 6) / 7
                tpdu.append(UInt8(headerSeptets + units.count))
                tpdu += header
                tpdu += pack(units.map(UInt8.init), startingAtBit: (headerSeptets * 7) - header.count * 8)
            case .ucs2:
                tpdu.append(UInt8(header.count + units.count * 2))
                tpdu += header
                for unit in units { tpdu += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
            }
            return Part(hex: "00" + hex(tpdu), tpduLength: tpdu.count)
        }
    }

    /// Destination address: length in digits, type (0x91 international, 0x81 national), BCD with
    /// the nibbles swapped and an F pad.
    static func address(_ number: String) -> [UInt8] {
        let international = number.hasPrefix("+")
        let digits = number.filter(\.isNumber).compactMap { $0.wholeNumberValue }.map(UInt8.init)
        var out: [UInt8] = [UInt8(digits.count), international ? 0x91 : 0x81]
        var index = 0
        while index < digits.count {
            let low = digits[index]
            let high: UInt8 = index + 1 < digits.count ? digits[index + 1] : 0x0F
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    /// Packs septets into octets, least significant bit first, after `fill` zero bits.
    static func pack(_ septets: [UInt8], startingAtBit fill: Int) -> [UInt8] {
        let bits = fill + septets.count * 7
        var out = [UInt8](repeating: 0, count: (bits + 7) / 8)
        for (i, septet) in septets.enumerated() {
            let bit = fill + i * 7
            let byte = bit / 8, shift = bit % 8
            out[byte] |= UInt8(truncatingIfNeeded: Int(septet) << shift)
            if shift > 1 { out[byte + 1] |= septet >> (8 - shift) }
        }
        return out
    }

    static func unpack(_ octets: ArraySlice<UInt8>, count: Int, startingAtBit fill: Int) -> [UInt8] {
        let bytes = Array(octets)
        return (0..<count).map { i in
            let bit = fill + i * 7
            let byte = bit / 8, shift = bit % 8
            var value = Int(bytes[byte]) >> shift
            if shift > 1 && byte + 1 < bytes.count { value |= Int(bytes[byte + 1]) << (8 - shift) }
            return UInt8(value & 0x7F)
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
    }

    static func bytes(_ hex: String) -> [UInt8]? {
        let characters = Array(hex.utf8)
        guard characters.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        var i = 0
        while i < characters.count {
            guard let high = hexValue(characters[i]), let low = hexValue(characters[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// What an SMS-SUBMIT PDU says, for tests and the fake modem.
    public struct Decoded: Equatable, Sendable {
        public var number: String
        public var text: String
        /// (reference, total, sequence) of a concatenated part.
        public var concatenation: (reference: UInt8, total: UInt8, sequence: UInt8)?
        public var tpduLength: Int

        public static func == (a: Decoded, b: Decoded) -> Bool {
            a.number == b.number && a.text == b.text && a.tpduLength == b.tpduLength
                && a.concatenation?.reference == b.concatenation?.reference
                && a.concatenation?.total == b.concatenation?.total && a.concatenation?.sequence == b.concatenation?.sequence
        }
    }

    /// Decodes an SMS-SUBMIT PDU (with its SMSC field first), or nil if it is not one.
    public static func decodeSubmit(_ hex: String) -> Decoded? {
        guard let all = bytes(hex), let smscLength = all.first, all.count > Int(smscLength) + 1 else { return nil }
        var p = Int(smscLength) + 1
        let tpduStart = p
        func next() -> UInt8? {
            guard p < all.count else { return nil }
            defer { p += 1 }
            return all[p]
        }
        guard let first = next(), first & 0x03 == 0x01, next() != nil, let digits = next(), let type = next() else { return nil }
        var number = type == 0x91 ? "+" : ""
        for _ in 0..<((Int(digits) + 1) / 2) {
            guard let octet = next() else { return nil }
            number += String(octet & 0x0F)
            if octet >> 4 != 0x0F { number += String(octet >> 4) }
        }
        guard next() != nil, let dcs = next() else { return nil }
        let vpFormat = (first >> 3) & 0x03
        if vpFormat == 2 { _ = next() } else if vpFormat != 0 { p += 7 }
        guard let udl = next() else { return nil }
        let ud = all[p...]
        var headerLength = 0
        var concatenation: (UInt8, UInt8, UInt8)?
        if first & 0x40 != 0, let udhl = ud.first {
            headerLength = Int(udhl) + 1
            let header = Array(ud.prefix(headerLength))
            if header.count >= 6 && header[1] == 0x00 { concatenation = (header[3], header[4], header[5]) }
        }
        let text: String
        if dcs == 0x08 {
            let payload = Array(ud.dropFirst(headerLength))
            let units = stride(from: 0, to: payload.count - 1, by: 2).map { UInt16(payload[$0]) << 8 | UInt16(payload[$0 + 1]) }
            text = String(decoding: units, as: UTF16.self)
        } else {
            let headerSeptets = (headerLength * 8 + 6) / 7
            let septets = unpack(ud, count: Int(udl) - headerSeptets, startingAtBit: headerSeptets * 7)
            text = GSM7.text(septets)
        }
        return Decoded(number: number, text: text, concatenation: concatenation, tpduLength: all.count - tpduStart)
    }
}
