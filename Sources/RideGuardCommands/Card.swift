// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Glibc
import QRCode
import RideGuardCore
import Storage

struct Card: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A rescue card for the helmet: the rider, the medical note, whom to call (numbers in full), and a QR code holding the same.",
        discussion: "Print the SVG at 100 % (105 × 74 mm). The card's words are in the rider's language (profile set --language).")

    @OptionGroup var db: DatabaseOption

    @Option(help: "Write the card as SVG to this file.")
    var out: String?

    @Flag(help: "Show the card's text and its QR code in the terminal (drawn for a dark background).")
    var terminal = false

    func validate() throws {
        guard out != nil || terminal else { throw ValidationError("say where the card goes: --out card.svg, or --terminal") }
    }

    func run() throws {
        let database = try db.open()
        let card = try Self.card(database, language: try database.profile().language ?? db.configuration.load().messages.language)
        let qr = try Self.qr(card)
        if let out { try Self.write(card, qr, to: out) }
        if terminal {
            Output.line(card.lines.joined(separator: "\n") + "\n")
            Output.line(RescueCard.terminal(qr), terminator: "")
        }
    }

    /// The card for the rider in `database`.
    static func card(_ database: RideGuardDatabase, language: MessageLanguage) throws -> RescueCard {
        let profile = try database.profile()
        return RescueCard(riderName: profile.name, medicalNote: profile.medicalNote,
                          contacts: try database.contacts().map { RescueCard.Contact(name: $0.name, number: $0.number) }, language: language)
    }

    static func qr(_ card: RescueCard) throws -> QRMatrix {
        do { return try QRCode.encode(card.qrText) } catch {
            Output.error("\(error)")
            throw ExitCode(1)
        }
    }

    /// The card as SVG at `path`, readable by its owner only: it holds the rider's medical note and
    /// the contacts' numbers.
    static func write(_ card: RescueCard, _ qr: QRMatrix, to path: String) throws {
        guard let svg = card.svg(qr: qr) else {
            Output.error("the card's text does not fit on it: shorten the medical note (rideguard profile set --medical \"...\")")
            throw ExitCode(1)
        }
        do {
            try Array(svg.utf8).withUnsafeBytes { try writeFile(path, $0) }
            chmod(path, 0o600)
        } catch {
            Output.error("\(error)")
            throw ExitCode(1)
        }
        Output.line("card written to \(path): print it at 100 % (105 × 74 mm)")
    }
}
