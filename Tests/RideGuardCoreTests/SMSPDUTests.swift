import Testing
@testable import RideGuardCore

/// Vectors from docs/hardware-notes.md §5.3, checked there with an independent PDU decoder.
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
        let decoded = try #require(SMSPDU.decodeSubmit(vector))
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
        let decoded = try #require(SMSPDU.decodeSubmit("0041000D91945111325476F80000110500032A020182C16030180C068341"))
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
        let decoded = try #require(SMSPDU.decodeSubmit(part.hex))
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
            let decoded = try #require(SMSPDU.decodeSubmit(part.hex))
            #expect(decoded.number == "+33612345678")
            #expect(decoded.tpduLength == part.tpduLength)
            #expect(part.tpduLength <= 140 + 13 + 1)
            if parts.count > 1 {
                #expect(decoded.concatenation?.sequence == UInt8(index + 1))
                #expect(decoded.concatenation?.total == UInt8(parts.count))
            }
            rebuilt += decoded.text
        }
        #expect(rebuilt == text)
    }
}
