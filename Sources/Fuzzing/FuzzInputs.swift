// SPDX-License-Identifier: Apache-2.0
import RideGuardCore
import ScenarioSynth
import RideGuardConfig

extension FuzzTarget {
    /// Valid inputs to start from, in each format's real shape (quirks included).
    package var seeds: [[UInt8]] {
        switch self {
        case .atLines:
            return [
                "AT+CSQ\r\r\n+CSQ: 18,99\r\n\r\nOK\r\n",
                "\r\n+CPIN: SIM PIN\r\n\r\nOK\r\n",
                "\r\n+CREG: 0,5\r\n\r\nOK\r\n\r\n+CEREG: 2,5,\"1F00\",\"79D903\",7\r\n",
                "\r\n> ",
                "\r\n+CMGS: 12\r\n\r\nOK\r\n",
                "\r\n+CMGS: 255,\"22/11/26,10:00:00+04\"\r\n\r\nOK\r\n",
                "\r\n+CMS ERROR: 38\r\n",
                "\r\n+CME ERROR: SIM not inserted\r\n",
                "\r\nCOMMAND NOT SUPPORT\r\n",
                "\r\n+CSCA: \"+33609001390\",145\r\n\r\nOK\r\n",
                "\r\nRDY\r\n\r\n+CFUN: 1\r\n\r\n+CPIN: READY\r\n\r\nSMS Ready\r\n",
                "\r\n^RSSI: 12\r\n\r\n+CMTI: \"SM\",3\r\n",
                "\u{00}\u{FF}\u{FE}\r\nOK\r\n",
            ].map { Array($0.utf8) }
        case .trace:
            let writer = TraceWriter(hasGyro: true, hasSpeed: true)
            var full = Array(writer.header(metadata: [("rate_hz", "100"), ("source", "fuzz seed")]).utf8)
            let rows: [IMUSample] = (0..<12).map { i in
                let t = Double(i) * 0.01
                return IMUSample(t: t, accel: Vector3(0.01 * Double(i), -0.2, 0.98), gyro: Vector3(1.5, -0.25, 1e-3 * Double(i)), speed: 12.5)
            }
            for row in rows { writer.appendRow(row, to: &full) }
            return [
                full,
                Array("time_s,ax,ay,az\r\n0,0,0,1\r\n0.01,-1.5e-2,+0.3,9.8E-1\r\n\r\n0.02, 0 ,0,1".utf8),
                Array("\u{FEFF}# rideguard-trace v1\n# note: a free comment\ntime_s,az,ay,ax,extra\n0,1,0,0,x\n1,1,0,0,y\n".utf8),
            ]
        case .config:
            return [
                ConfigurationFile.example,
                """
                imu:
                  simulated: true
                  trace: /tmp/t.csv
                  rate_hz: 400
                gpio: {simulated: yes, buzzer: GPIO18, button: "gpiochip0:17"}
                gps:
                  fixed_position: [45.1, 5.7]
                modem:
                  device: /dev/ttyUSB2
                  pin: "1234"
                  baud: 115200
                workflow:
                  countdown_s: 60
                detector:
                  lyingAngleDegrees: 60
                database: /var/lib/rideguard/rideguard.sqlite
                control_socket: /run/rideguard/control.sock
                """,
            ].map { Array($0.utf8) }
        case .http:
            return [
                "GET /contacts?since=12h&kind=alerts HTTP/1.1\r\nHost: 192.168.4.1:8080\r\nCookie: theme=dark; rideguard_session=abc%20def\r\nAccept: text/html\r\n\r\n",
                "POST /contacts HTTP/1.1\r\nHost: pi\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 48\r\n\r\ncsrf=x1&name=S%C3%A9bastien+M&number=%2B33612345",
                "GET /pair?code=abcd1234efgh HTTP/1.0\r\nUser-Agent: a phone\r\nX-Many:  a\r\nX-Many: b\r\n\r\n",
                "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            ].map { Array($0.utf8) }
        case .pdu:
            return [
                "07917283010010F5040BC87238880900F10000993092516195800AE8329BFD4697D9EC37",
                "0041000D91945111325476F80000110500032A020182C16030180C068341",
                // UCS2, part 1 of 2 with a 16-bit reference; an alphanumeric sender ("Orange").
                "00400B913316325476F80008621132412305401D06080412340201004F00F9002000650073002D007400750020003F0020",
                "00040BD04F79D87D2E03000062113241230540055764515A04",
            ].map { Array($0.utf8) }
        }
    }

    /// Words worth inserting whole: the formats' own separators and numbers at their limits.
    var dictionary: [[UInt8]] {
        let common = ["\r\n", "\n", "\r", ",", ":", " ", "\"", "\u{FEFF}", "\u{0}", "-", "9223372036854775808", "1e308", "-0", "٣"]
        let own: [String] = switch self {
        case .atLines: ["> ", "OK", "ERROR", "+CMS ERROR:", "+CME ERROR:", "+CSQ:", "+CMGS:", "+CREG:", "+CPIN:", "+CSCA:", "^", "\u{1A}"]
        case .trace: ["# rideguard-trace v1", "time_s", "ax", "gx", "speed_mps", "nan", "inf", "e", "E-", "0x1p3", "#"]
        case .config: ["imu:", "  ", "- ", "&a", "*a", "<<: *a", "!!binary", "{", "}", "[", "]", "'", "|", ">", "~", "null", "yes", "0o17", ".inf"]
        case .pdu: ["00", "FF", "40", "91", "D0", "08", "0500", "0608", "1B", "7F", "80"]
        case .http: ["\r\n\r\n", "GET ", "POST ", " HTTP/1.1", " HTTP/1.0", "Content-Length: ", "Transfer-Encoding: chunked", "Host: ",
                     "Cookie: ", "; ", "=", "&", "%", "%2", "%C3%A9", "+", "?", "/", "\t", "99999999999"]
        }
        return (common + own).map { Array($0.utf8) }
    }
}

/// A small mutation engine for the seeded run (libFuzzer does its own with coverage): a few random
/// edits of a seed, or a splice of two.
package struct FuzzMutator {
    let target: FuzzTarget
    var random: SeededRandom

    package init(target: FuzzTarget, seed: UInt64) {
        self.target = target
        random = SeededRandom(seed: seed)
    }

    mutating func below(_ n: Int) -> Int { n <= 1 ? 0 : Int(random.next() % UInt64(n)) }

    package mutating func next() -> [UInt8] {
        let seeds = target.seeds, words = target.dictionary
        var input = seeds[below(seeds.count)]
        for _ in 0...below(4) {
            let at = below(input.count + 1)
            switch below(8) {
            case 0 where !input.isEmpty: input[min(at, input.count - 1)] ^= UInt8(1) << UInt8(below(8))
            case 1 where !input.isEmpty: input[min(at, input.count - 1)] = UInt8(truncatingIfNeeded: random.next())
            case 2: input.insert(contentsOf: words[below(words.count)], at: at)
            case 3: input.removeSubrange(at..<min(input.count, at + 1 + below(16)))
            case 4:
                let end = min(input.count, at + 1 + below(64))
                input.insert(contentsOf: Array(input[at..<end]), at: end)
            case 5:
                let other = seeds[below(seeds.count)]
                let from = below(other.count)
                input = Array(input[..<at]) + other[from...]
            case 6: input.removeSubrange(at...)
            default: input.insert(UInt8(truncatingIfNeeded: random.next()), at: at)
            }
        }
        return input
    }
}
