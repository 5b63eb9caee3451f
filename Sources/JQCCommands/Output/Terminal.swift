import ArgumentParsing
import CurlTransport
import Dispatch
import FoundationEssentials
import Glibc
import HTTPCore
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore
import SyncWorker

/// Reading what the user types: a line, or a password without echo.
enum Terminal {
    /// Asks on standard error and reads a line from a terminal.
    static func prompt(_ question: String) throws -> String {
        guard isatty(0) == 1 else {
            throw JQCError.noTerminalForUserName
        }
        try? OpenFile.standardError.write(question)
        return try readLine(what: "user name").trimming(.spaces)
    }

    /// One line from standard input, without its line break.
    static func readLine(what: String) throws -> String {
        guard var line = Swift.readLine(strippingNewline: true) else {
            throw JQCError.emptyStandardInput(what: what)
        }
        if line.hasSuffix("\r") { line.removeLast() }
        return line
    }

    /// The password, typed on the terminal with echo turned off (termios).
    static func secret() throws -> String {
        guard isatty(0) == 1 else {
            throw JQCError.noTerminalForPassword
        }
        var saved = termios()
        guard tcgetattr(0, &saved) == 0 else { throw JQCError.io("reading the terminal's settings", errno) }
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        // Echo off first, prompt second: TCSAFLUSH discards input typed
        // before it takes effect, which must never include the password.
        guard tcsetattr(0, TCSAFLUSH, &silent) == 0 else { throw JQCError.io("turning off the echo", errno) }
        defer {
            tcsetattr(0, TCSANOW, &saved)
            try? OpenFile.standardError.write("\n")
        }
        try? OpenFile.standardError.write("Password: ")
        return try readLine(what: "password")
    }
}
