// SPDX-License-Identifier: Apache-2.0
/// SMS-SUBMIT in PDU mode (3GPP TS 23.040): what `AT+CMGS=<length>` takes after the prompt.
package enum SMSPDU {
    /// One part, ready for the modem: `AT+CMGS=<tpduLength>`, then `hex` and Ctrl-Z.
    package struct Part: Equatable, Sendable {
        /// The PDU in hex, starting with `00` (use the SMSC stored in the SIM, AT+CSCA).
        package var hex: String
        /// Octets after the SMSC field, the number AT+CMGS wants.
        package var tpduLength: Int
    }

    /// Encodes `text` for `number` (`+` and digits for international, digits alone for national),
    /// in as many parts as it needs; parts of one message share `reference`.
    package static func encode(_ text: String, to number: String, reference: UInt8,
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

    /// What an SMS-SUBMIT (what we send) or SMS-DELIVER (what we receive) PDU says.
    package struct Decoded: Equatable, Sendable {
        package enum Kind: Sendable { case deliver, submit }
        package var kind: Kind
        /// The sender (DELIVER) or the recipient (SUBMIT): `+` and digits when international,
        /// digits when national, the name when alphanumeric ("ACME").
        package var number: String
        package var text: String
        /// Of one part of a concatenated message: its reference (8 or 16 bits), how many parts,
        /// and which one this is (from 1).
        package var concatenation: Concatenation?
        /// Octets after the SMSC field.
        package var tpduLength: Int
    }

    package struct Concatenation: Equatable, Sendable {
        package var reference: Int
        package var total: Int
        package var sequence: Int
    }

    /// Decodes a PDU as a modem shows it (`+CMGR`, `+CMGL`, `+CMT`, or what `AT+CMGS` takes), with
    /// its SMSC field first; nil if it is neither an SMS-DELIVER nor an SMS-SUBMIT or is cut short.
    /// 3GPP TS 23.040 §9.2 (the fields) and TS 23.038 §4 (the data coding scheme).
    package static func decode(_ hex: String) -> Decoded? {
        guard let all = bytes(hex), let smscLength = all.first, all.count > Int(smscLength) + 1 else { return nil }
        var reader = Reader(octets: all, position: Int(smscLength) + 1)
        let tpduStart = reader.position
        guard let first = reader.next() else { return nil }
        let kind: Decoded.Kind
        switch first & 0x03 {
        case 0x00: kind = .deliver
        case 0x01:
            kind = .submit
            guard reader.next() != nil else { return nil }           // message reference
        default: return nil
        }
        guard let number = address(&reader), reader.next() != nil, let dcs = reader.next() else { return nil }   // PID, DCS
        if kind == .deliver {
            guard reader.skip(7) else { return nil }                    // the service centre's time stamp
        } else {
            switch (first >> 3) & 0x03 {                                // validity period
            case 2: guard reader.skip(1) else { return nil }
            case 1, 3: guard reader.skip(7) else { return nil }
            default: break
            }
        }
        guard let udl = reader.next(), let alphabet = Alphabet(dcs) else { return nil }
        let ud = all[reader.position...]
        var headerLength = 0
        var concatenation: Concatenation?
        if first & 0x40 != 0 {
            guard let udhl = ud.first, ud.count > Int(udhl) else { return nil }
            headerLength = Int(udhl) + 1
            concatenation = Self.concatenation(Array(ud.dropFirst().prefix(Int(udhl))))
        }
        let text: String
        switch alphabet {
        case .gsm7:
            let headerSeptets = (headerLength * 8 + 6) / 7
            let septets = Int(udl) - headerSeptets
            guard septets >= 0, ud.count * 8 >= Int(udl) * 7 else { return nil }
            text = GSM7.text(unpack(ud, count: septets, startingAtBit: headerSeptets * 7))
        case .ucs2:
            let payload = Array(ud.prefix(Int(udl)).dropFirst(headerLength))
            let units = stride(from: 0, to: payload.count - 1, by: 2).map { UInt16(payload[$0]) << 8 | UInt16(payload[$0 + 1]) }
            text = String(decoding: units, as: UTF16.self)
        case .octets:
            text = String(ud.prefix(Int(udl)).dropFirst(headerLength).map { Character(Unicode.Scalar($0)) })   // as Latin-1
        }
        return Decoded(kind: kind, number: number, text: text, concatenation: concatenation, tpduLength: all.count - tpduStart)
    }

    /// The alphabet a data coding scheme names (TS 23.038 §4); nil for compressed text.
    enum Alphabet {
        case gsm7, octets, ucs2

        init?(_ dcs: UInt8) {
            switch dcs >> 4 {
            case 0x0...0x7:                                   // general data coding (bit 5: compressed)
                guard dcs & 0x20 == 0 else { return nil }
                self = [.gsm7, .octets, .ucs2, .gsm7][Int((dcs >> 2) & 0x03)]
            case 0xC, 0xD: self = .gsm7                       // message waiting: discard / store
            case 0xE: self = .ucs2                            // message waiting: store, UCS2
            case 0xF: self = dcs & 0x04 == 0 ? .gsm7 : .octets
            default: return nil                               // reserved
            }
        }
    }

    /// An address field: length in semi-octets, type, then swapped BCD digits or packed GSM 7-bit
    /// (an alphanumeric sender, type 0x50 in bits 6–4).
    private static func address(_ reader: inout Reader) -> String? {
        guard let digits = reader.next(), let type = reader.next() else { return nil }
        let octets = (Int(digits) + 1) / 2
        guard let field = reader.take(octets) else { return nil }
        if type & 0x70 == 0x50 {
            return GSM7.text(unpack(field[...], count: Int(digits) * 4 / 7, startingAtBit: 0))
        }
        var number = type & 0x70 == 0x10 ? "+" : ""
        for octet in field {
            number += String(octet & 0x0F)
            if octet >> 4 != 0x0F { number += String(octet >> 4) }
        }
        return String(number.prefix(Int(digits) + (number.hasPrefix("+") ? 1 : 0)))
    }

    /// The concatenation element of a user data header: IEI 0x00 (8-bit reference) or 0x08 (16-bit).
    private static func concatenation(_ header: [UInt8]) -> Concatenation? {
        var index = 0
        while index + 1 < header.count {
            let id = header[index], length = Int(header[index + 1])
            let element = Array(header.dropFirst(index + 2).prefix(length))
            guard element.count == length else { return nil }
            if id == 0x00 && length == 3 { return Concatenation(reference: Int(element[0]), total: Int(element[1]), sequence: Int(element[2])) }
            if id == 0x08 && length == 4 {
                return Concatenation(reference: Int(element[0]) << 8 | Int(element[1]), total: Int(element[2]), sequence: Int(element[3]))
            }
            index += 2 + length
        }
        return nil
    }

    private struct Reader {
        let octets: [UInt8]
        var position: Int

        mutating func next() -> UInt8? {
            guard position < octets.count else { return nil }
            defer { position += 1 }
            return octets[position]
        }

        mutating func take(_ count: Int) -> [UInt8]? {
            guard position + count <= octets.count else { return nil }
            defer { position += count }
            return Array(octets[position..<position + count])
        }

        mutating func skip(_ count: Int) -> Bool { take(count) != nil }
    }
}
