// SPDX-License-Identifier: Apache-2.0
import CYAML

/// One YAML document as the configuration reads it, from libyaml's events: mappings in the file's
/// order, sequences, and scalars left as text (each key reads its own type), each with its line.
/// Anchors and aliases are followed; tags are ignored.
struct YAMLNode: Sendable {
    enum Content: Sendable {
        case scalar(String, plain: Bool)
        case mapping([(key: YAMLNode, value: YAMLNode)])
        case sequence([YAMLNode])
    }

    var content: Content
    /// 1-based, as editors count.
    var line: Int

    var string: String? { if case .scalar(let text, _) = content { text } else { nil } }
    /// Written without quotes (`~`, `null` and nothing mean null only then).
    var isPlainScalar: Bool { if case .scalar(_, let plain) = content { plain } else { false } }
    var mapping: [(key: YAMLNode, value: YAMLNode)]? { if case .mapping(let pairs) = content { pairs } else { nil } }
    var sequence: [YAMLNode]? { if case .sequence(let items) = content { items } else { nil } }

    /// What libyaml found wrong, where, and while reading what.
    struct SyntaxError: Error, Sendable {
        var line: Int?
        var problem: String
        var context: (text: String, line: Int)?
    }

    /// The document in `text`; nil for a file with no document (empty, or only comments).
    static func parse(_ text: String) throws(SyntaxError) -> YAMLNode? {
        // libyaml keeps the parser where it was made: one place, never copied.
        let parser = UnsafeMutablePointer<yaml_parser_t>.allocate(capacity: 1)
        defer { parser.deallocate() }
        guard yaml_parser_initialize(parser) == 1 else { throw SyntaxError(line: nil, problem: "out of memory") }
        defer { yaml_parser_delete(parser) }
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { buffer throws(SyntaxError) in
            yaml_parser_set_input_string(parser, buffer.baseAddress, buffer.count)
            var composer = Composer(parser: parser)
            return try composer.document()
        }
    }

    private struct Composer {
        let parser: UnsafeMutablePointer<yaml_parser_t>
        var anchors: [String: YAMLNode] = [:]

        /// The stream's one document: a second one is an error, as the file is one configuration.
        mutating func document() throws(SyntaxError) -> YAMLNode? {
            var root: YAMLNode?
            while true {
                var event = try next()
                defer { yaml_event_delete(&event) }
                switch event.type {
                case YAML_STREAM_END_EVENT:
                    return root
                case YAML_DOCUMENT_START_EVENT where root != nil:
                    throw SyntaxError(line: Int(event.start_mark.line) + 1, problem: "a second document (---): the configuration is one document")
                case YAML_DOCUMENT_START_EVENT:
                    var first = try next()
                    root = try node(from: &first)
                    var end = try next()
                    yaml_event_delete(&end)
                default:
                    continue   // STREAM_START
                }
            }
        }

        /// The node that `event` starts (and consumes).
        mutating func node(from event: inout yaml_event_t) throws(SyntaxError) -> YAMLNode {
            defer { yaml_event_delete(&event) }
            let line = Int(event.start_mark.line) + 1
            switch event.type {
            case YAML_SCALAR_EVENT:
                let scalar = event.data.scalar
                let text = String(decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length), as: UTF8.self)
                return remember(YAMLNode(content: .scalar(text, plain: scalar.style == YAML_PLAIN_SCALAR_STYLE), line: line),
                                anchor: scalar.anchor)
            case YAML_ALIAS_EVENT:
                let name = String(cString: event.data.alias.anchor)
                guard let node = anchors[name] else { throw SyntaxError(line: line, problem: "no anchor named &\(name) before *\(name)") }
                return node
            case YAML_SEQUENCE_START_EVENT:
                let anchor = event.data.sequence_start.anchor.map { String(cString: $0) }
                var items: [YAMLNode] = []
                while true {
                    var item = try next()
                    if item.type == YAML_SEQUENCE_END_EVENT {
                        yaml_event_delete(&item)
                        break
                    }
                    items.append(try node(from: &item))
                }
                return remember(YAMLNode(content: .sequence(items), line: line), anchor: anchor)
            case YAML_MAPPING_START_EVENT:
                let anchor = event.data.mapping_start.anchor.map { String(cString: $0) }
                var pairs: [(key: YAMLNode, value: YAMLNode)] = []
                var seen: [String: Int] = [:]
                while true {
                    var keyEvent = try next()
                    if keyEvent.type == YAML_MAPPING_END_EVENT {
                        yaml_event_delete(&keyEvent)
                        break
                    }
                    let key = try node(from: &keyEvent)
                    var valueEvent = try next()
                    let value = try node(from: &valueEvent)
                    if let name = key.string {
                        if let first = seen[name] {
                            throw SyntaxError(line: key.line, problem: "'\(name)' appears twice (first on line \(first)): which one is meant?")
                        }
                        seen[name] = key.line
                    }
                    pairs.append((key, value))
                }
                return remember(YAMLNode(content: .mapping(pairs), line: line), anchor: anchor)
            default:
                throw SyntaxError(line: line, problem: "unexpected event \(event.type.rawValue)")
            }
        }

        private mutating func remember(_ node: YAMLNode, anchor: UnsafeMutablePointer<yaml_char_t>?) -> YAMLNode {
            if let anchor { anchors[String(cString: anchor)] = node }
            return node
        }

        private mutating func remember(_ node: YAMLNode, anchor: String?) -> YAMLNode {
            if let anchor { anchors[anchor] = node }
            return node
        }

        /// The next event, or libyaml's error in words with its lines.
        mutating func next() throws(SyntaxError) -> yaml_event_t {
            var event = yaml_event_t()
            guard yaml_parser_parse(parser, &event) == 1 else {
                let parser = parser.pointee
                let problem = parser.problem.map { String(cString: $0) } ?? "cannot be read"
                if parser.error == YAML_READER_ERROR {
                    throw SyntaxError(line: nil, problem: "\(problem) at byte \(parser.problem_offset)")
                }
                let context = parser.context.map { (text: String(cString: $0), line: Int(parser.context_mark.line) + 1) }
                throw SyntaxError(line: Int(parser.problem_mark.line) + 1, problem: problem, context: context)
            }
            return event
        }
    }
}
