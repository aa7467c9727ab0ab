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
var told = 0
while true {
    let delivered = modem.delivered
    for message in delivered.dropFirst(told) {
        let text = message.text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
        FileHandle.standardOutput.write(Data("sms to=\(message.number) parts=\(message.parts) text=\(text)\n".utf8))
    }
    told = delivered.count
    usleep(100_000)
}
