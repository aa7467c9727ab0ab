// SPDX-License-Identifier: Apache-2.0
// The tests' fake modem (RideGuardTestSupport's FakeModem: a SIM ready, the network at home) as a
// program of its own, for a machine outside this process to talk to: the VM tests hand its
// pseudo-terminal to qemu as a USB serial adapter, and the agent in the guest sends its SMS to it.
//   rideguard-fake-modem LINK
// LINK becomes a symbolic link to the pseudo-terminal. Every message the modem is given is written
// to standard output once its last part arrives, one line each:
//   sms to=<recipient> parts=<how many> text=<the whole text, newlines as \n>
// Runs until killed.
import Foundation
import RideGuardTestSupport

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: rideguard-fake-modem LINK\n".utf8))
    exit(2)
}
let modem: FakeModem
do {
    modem = try FakeModem(link: arguments[1])
} catch {
    FileHandle.standardError.write(Data("rideguard-fake-modem: \(error)\n".utf8))
    exit(1)
}
func tell(_ number: String, parts: Int, _ text: String) {
    let line = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    FileHandle.standardOutput.write(Data("sms to=\(number) parts=\(parts) text=\(line)\n".utf8))
}
var told = 0
/// Parts of concatenated messages not complete yet, by recipient and reference, then by sequence.
var partial: [String: [Int: String]] = [:]
while true {
    let received = modem.received
    for part in received.dropFirst(told) {
        let message = part.decoded
        guard let concatenation = message.concatenation else {
            tell(message.number, parts: 1, message.text)
            continue
        }
        let key = "\(message.number) \(concatenation.reference)"
        partial[key, default: [:]][concatenation.sequence] = message.text
        if partial[key]!.count == concatenation.total {
            tell(message.number, parts: concatenation.total, (1...concatenation.total).map { partial[key]![$0] ?? "" }.joined())
            partial[key] = nil
        }
    }
    told = received.count
    usleep(100_000)
}
