// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import RideGuardCore

/// SMS-SUBMIT PDUs as 3GPP TS 23.040 lays them out (GSM 7-bit and UCS-2 per TS 23.038, concatenated
/// with an 8-bit reference), each vector decoded back with an independent PDU decoder.
@Suite struct SMSPDUTests {
    @Test func gsm7SinglePart() {
        let parts = SMSPDU.encode("Crash detected! Lat 52.52000 Lon 13.40500", to: "+4915112345678", reference: 0)
        #expect(parts == [SMSPDU.Part(
            hex: "0001000D91945111325476F80000294379788E0691CBF4F2985E268740CC301D5493B96A32180C0662BEDDA0D8CC4583D56030",
            tpduLength: 50)])
    }

    @Test func ucs2FirstOfTwoParts() throws {
        let text = "Unfall erkannt – Hilfe!"
        let vector = "0041000D91945111325476F80008340500032A0201"
            + "0055006E00660061006C006C002000650072006B0061006E006E007400202013002000480069006C006600650021"
        let decoded = try #require(SMSPDU.decode(vector))
        #expect(decoded.text == text)
        #expect(decoded.tpduLength == 66)
        #expect(decoded.concatenation?.reference == 0x2A && decoded.concatenation?.total == 2
                && decoded.concatenation?.sequence == 1)
        // Our encoder writes the same header and payload for a two-part message starting with it.
        let parts = SMSPDU.encode(text + String(repeating: "–", count: 60), to: "+4915112345678", reference: 0x2A)
        #expect(parts.count == 2)
        #expect(parts[0].hex.hasPrefix("0041000D91945111325476F800088C0500032A0201"
            + "0055006E00660061006C006C002000650072006B0061006E006E007400202013002000480069006C006600650021"))
        #expect(parts[0].tpduLength == 14 + 140)
    }

    @Test func gsm7FirstOfTwoPartsHasAFillBit() throws {
        let decoded = try #require(SMSPDU.decode("0041000D91945111325476F80000110500032A020182C16030180C068341"))
        #expect(decoded.text == "AAAAAAAAAA")
        #expect(decoded.tpduLength == 29)
        let parts = SMSPDU.encode(String(repeating: "A", count: 153) + "AAAAAAAAAA", to: "+4915112345678", reference: 0x2A)
        #expect(parts.count == 2)
        #expect(parts[1].hex == "0041000D91945111325476F80000110500032A020282C16030180C068341")
        #expect(parts[1].tpduLength == 29)
    }

    @Test func nationalNumberAndValidityPeriod() throws {
        let part = try #require(SMSPDU.encode("test", to: "0612345678", reference: 0, validityPeriod: 0xA7).first)
        #expect(part.hex == "0011000A81" + "6021436587" + "0000A704F4F29C0E")
        let decoded = try #require(SMSPDU.decode(part.hex))
        #expect(decoded.number == "0612345678" && decoded.text == "test")
    }

    @Test(arguments: [
        String(repeating: "Crash [help] {now} € ", count: 20),                      // 400 characters, extension table
        "Accident 🏍💥 " + String(repeating: "aide ", count: 30),                      // emoji: UCS2, pairs never cut
        "Short",
        String(repeating: "x", count: 153 * 3),
    ])
    func roundTripsThroughOurDecoder(text: String) throws {
        let parts = SMSPDU.encode(text, to: "+33612345678", reference: 7)
        var rebuilt = ""
        for (index, part) in parts.enumerated() {
            let decoded = try #require(SMSPDU.decode(part.hex))
            #expect(decoded.number == "+33612345678")
            #expect(decoded.tpduLength == part.tpduLength)
            #expect(part.tpduLength <= 140 + 13 + 1)
            if parts.count > 1 {
                #expect(decoded.concatenation?.sequence == index + 1)
                #expect(decoded.concatenation?.total == parts.count)
            }
            rebuilt += decoded.text
        }
        #expect(rebuilt == text)
    }

    // SMS-DELIVER: what a modem shows of a received message (+CMGR, +CMT).

    @Test func deliverFromThePublicPDUPrimer() throws {
        // The SMS-DELIVER example of the widely copied "SMS and the PDU format" primer (dreamfabric.com):
        // SMSC +27381000015, sender 27838890001 (type C8), GSM 7-bit, "hellohello".
        let decoded = try #require(SMSPDU.decode("07917283010010F5040BC87238880900F10000993092516195800AE8329BFD4697D9EC37"))
        #expect(decoded.kind == .deliver)
        #expect(decoded.number == "27838890001")
        #expect(decoded.text == "hellohello")
        #expect(decoded.concatenation == nil)
    }

    @Test func deliverInUCS2InTwoPartsWithA16BitReference() throws {
        // Built from TS 23.040 by hand: UDHI set, sender +33612345678, DCS 08, a time stamp, then
        // UDH 06 08 04 <ref 0x1234> <2 parts> <part n>, then UTF-16 big-endian.
        func part(_ sequence: UInt8, _ text: String) -> String {
            let payload = text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
            let header: [UInt8] = [0x06, 0x08, 0x04, 0x12, 0x34, 0x02, sequence]
            let tpdu: [UInt8] = [0x40, 0x0B, 0x91, 0x33, 0x16, 0x32, 0x54, 0x76, 0xF8, 0x00, 0x08,
                                 0x62, 0x11, 0x32, 0x41, 0x23, 0x05, 0x40, UInt8(header.count + payload.count)] + header + payload
            return "00" + SMSPDU.hex(tpdu)
        }
        let first = try #require(SMSPDU.decode(part(1, "Où es-tu ? ")))
        let second = try #require(SMSPDU.decode(part(2, "Где ты? 🏍")))
        #expect(first.kind == .deliver && first.number == "+33612345678")
        #expect(first.concatenation == SMSPDU.Concatenation(reference: 0x1234, total: 2, sequence: 1))
        #expect(second.concatenation == SMSPDU.Concatenation(reference: 0x1234, total: 2, sequence: 2))
        #expect(first.text + second.text == "Où es-tu ? Где ты? 🏍")
    }

    @Test func deliverFromAnAlphanumericSender() throws {
        // "Orange" in the originator field: type D0 (alphanumeric), packed GSM 7-bit, length in semi-octets.
        let name = SMSPDU.pack(GSM7.septets("Orange")!, startingAtBit: 0)
        let body = SMSPDU.pack(GSM7.septets("WHERE")!, startingAtBit: 0)
        let tpdu: [UInt8] = [0x04, UInt8((6 * 7 + 3) / 4), 0xD0] + name + [0x00, 0x00, 0x62, 0x11, 0x32, 0x41, 0x23, 0x05, 0x40, 0x05] + body
        let decoded = try #require(SMSPDU.decode("00" + SMSPDU.hex(tpdu)))
        #expect(decoded.number == "Orange")
        #expect(decoded.text == "WHERE")
    }

    @Test func cutShortOrCompressedIsNil() {
        #expect(SMSPDU.decode("07917283010010F5040BC87238880900F10000993092") == nil)          // ends in the time stamp
        #expect(SMSPDU.decode("07917283010010F5040BC87238880900F10020993092516195800AE8329BFD4697D9EC37") == nil)   // DCS 20: compressed
        #expect(SMSPDU.decode("07917283010010F5040BC87238880900F10000993092516195800AE8329B") == nil)   // 10 septets announced, 4 octets
        #expect(SMSPDU.decode("zz") == nil)
    }
}
