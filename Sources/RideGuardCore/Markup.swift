/// Text put inside HTML or SVG (the report, the rescue card): the characters markup gives a meaning
/// written as entities.
package enum Markup {
    package static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
