// SPDX-License-Identifier: Apache-2.0
/// The modules of a QR code, row by row: true is dark. Made by an adapter (libqrencode); drawn here.
package struct QRMatrix: Equatable, Sendable {
    package let width: Int
    package let modules: [Bool]

    package init(width: Int, modules: [Bool]) {
        precondition(modules.count == width * width, "a QR code is square")
        self.width = width
        self.modules = modules
    }

    /// Outside the code (the quiet zone) is light.
    package func isDark(_ x: Int, _ y: Int) -> Bool {
        x >= 0 && y >= 0 && x < width && y < width && modules[y * width + x]
    }
}

/// What a rescuer at the roadside needs, for a card in the helmet: who the rider is, the medical
/// note, whom to call (numbers in full: this is for rescuers, not for logs), and that the bike
/// carries RideGuard. The QR code holds the same facts as text, read by any phone camera.
package struct RescueCard: Equatable, Sendable {
    package struct Contact: Equatable, Sendable {
        package var name: String
        package var number: String

        package init(name: String, number: String) {
            self.name = name
            self.number = number
        }
    }

    package var riderName: String?
    package var medicalNote: String?
    package var contacts: [Contact]
    package var language: MessageLanguage

    package init(riderName: String?, medicalNote: String?, contacts: [Contact], language: MessageLanguage = .en) {
        self.riderName = riderName
        self.medicalNote = medicalNote
        self.contacts = contacts
        self.language = language
    }

    /// The card's lines, as printed and as held in the QR code.
    package var lines: [String] {
        let w = CardWords.for(language)
        var lines = [w.title]
        if let riderName { lines.append("\(w.rider): \(riderName)") }
        if let medicalNote { lines.append("\(w.medical): \(medicalNote)") }
        lines.append(contacts.isEmpty ? w.noContact : w.call + ":")
        lines += contacts.map { "\($0.name): \($0.number)" }
        lines.append(w.carries)
        return lines
    }

    /// The QR code's text.
    package var qrText: String { lines.joined(separator: "\n") }

    /// The card as SVG: A7 landscape (105 × 74 mm), the facts on the left, the QR code on the right,
    /// black on white, for any printer. Lines too long for the card are wrapped, never cut; nil when
    /// the text does not fit even in small letters.
    package func svg(qr: QRMatrix) -> String? {
        let quiet = 4
        let side = 44.0                                  // mm: the QR code with its quiet zone
        let module = side / Double(qr.width + 2 * quiet)
        let qrX = 105.0 - side - 3, qrY = (74.0 - side) / 2
        var path = ""
        for y in 0..<qr.width {
            for x in 0..<qr.width where qr.isDark(x, y) {
                path += "M\(Self.mm(qrX + Double(x + quiet) * module)) \(Self.mm(qrY + Double(y + quiet) * module))h\(Self.mm(module))v\(Self.mm(module))h-\(Self.mm(module))z"
            }
        }
        // A long medical note or many contacts: smaller letters (down to 2.1 mm), never cut.
        var text = ""
        var fits = false
        for scale in [1.0, 0.85, 0.7] where !fits {
            text = ""
            var baseline = 8.0 * scale
            for (index, line) in lines.enumerated() {
                let size = (index == 0 ? 4.2 : 3.0) * scale
                for piece in Self.wrap(line, columns: Int(Double(index == 0 ? 24 : 34) / scale)) {
                    text += "<text x=\"4\" y=\"\(Self.mm(baseline))\" font-size=\"\(Self.mm(size))\"\(index == 0 ? " font-weight=\"bold\"" : "")>\(Markup.escaped(piece))</text>\n"
                    baseline += size * 1.3
                }
                if index == 0 { baseline += 1.5 * scale }
            }
            fits = baseline <= 72
        }
        guard fits else { return nil }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="105mm" height="74mm" viewBox="0 0 105 74" font-family="DejaVu Sans, Arial, sans-serif">
            <rect width="105" height="74" fill="#fff" stroke="#000" stroke-width="0.3"/>
            \(text)<path d="\(path)" fill="#000" shape-rendering="crispEdges"/>
            </svg>

            """
    }

    /// The QR code drawn with Unicode half blocks, two rows of modules per line of text, for a dark
    /// terminal: a light module is a lit block, so the code reads as dark on light on screen.
    package static func terminal(_ qr: QRMatrix) -> String {
        let quiet = 4
        var out = ""
        for y in stride(from: -quiet, to: qr.width + quiet, by: 2) {
            for x in -quiet..<(qr.width + quiet) {
                switch (qr.isDark(x, y), qr.isDark(x, y + 1)) {
                case (false, false): out += "█"
                case (false, true): out += "▀"
                case (true, false): out += "▄"
                case (true, true): out += " "
                }
            }
            out += "\n"
        }
        return out
    }

    static func mm(_ value: Double) -> String { DecimalFormat.string(value, decimals: 2) }

    /// Splits at spaces into lines of at most `columns` characters (a longer word stands alone).
    static func wrap(_ line: String, columns: Int) -> [String] {
        var lines: [String] = []
        var current = ""
        for word in line.split(separator: " ", omittingEmptySubsequences: false) {
            if !current.isEmpty && current.count + 1 + word.count > columns {
                lines.append(current)
                current = String(word)
            } else {
                current += (current.isEmpty ? "" : " ") + word
            }
        }
        lines.append(current)
        return lines
    }
}

/// The card's words, in the languages of the messages.
struct CardWords {
    var title: String
    var rider: String
    var medical: String
    var call: String
    var noContact: String
    var carries: String

    static func `for`(_ language: MessageLanguage) -> CardWords {
        switch language {
        case .en:
            CardWords(title: "RideGuard rescue card", rider: "Rider", medical: "Medical", call: "In an emergency call",
                      noContact: "No emergency contact set", carries: "This motorbike carries RideGuard: after a crash it texts these contacts where it is.")
        case .fr:
            CardWords(title: "Carte de secours RideGuard", rider: "Motard", medical: "Médical", call: "En cas d'urgence appeler",
                      noContact: "Aucun contact d'urgence", carries: "Cette moto porte RideGuard : après une chute, il envoie sa position à ces contacts.")
        case .de:
            CardWords(title: "RideGuard Notfallkarte", rider: "Fahrer", medical: "Medizinisch", call: "Im Notfall anrufen",
                      noContact: "Kein Notfallkontakt eingetragen", carries: "Dieses Motorrad hat RideGuard: nach einem Sturz schickt es diesen Kontakten seine Position.")
        case .es:
            CardWords(title: "Tarjeta de rescate RideGuard", rider: "Motorista", medical: "Médico", call: "En caso de emergencia llamar a",
                      noContact: "Ningún contacto de emergencia", carries: "Esta moto lleva RideGuard: tras una caída envía su posición a estos contactos.")
        case .it:
            CardWords(title: "Scheda di soccorso RideGuard", rider: "Motociclista", medical: "Medico", call: "In caso di emergenza chiamare",
                      noContact: "Nessun contatto di emergenza", carries: "Questa moto ha RideGuard: dopo una caduta invia la sua posizione a questi contatti.")
        }
    }
}
