/// A command that ends with its own exit status (a status other than 1 is
/// documented in the command's help), its message on standard error: `verify
/// --bundle` exits 2 for an unreadable bundle, as the bundle tools do.
struct CommandExit: Error, CustomStringConvertible {
    var status: Int32
    var message: String

    var description: String { message }
}
