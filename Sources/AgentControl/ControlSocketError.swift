/// The control socket could not be opened, reached or understood.
package struct ControlSocketError: Error, CustomStringConvertible, Sendable {
    package var path: String
    package var reason: String
    package var errno: Int32 = 0
    package var description: String { "control socket \(path): \(reason)" }
}
