import Foundation
import LMDB
import LedgerStore
import Testing

/// `ENOMEM` from LMDB is blamed on the address-space limit only when the
/// process has one; without one it says memory is short, and never advises
/// raising a limit that is not there.
@Suite struct OutOfMemoryWordingTests {
    static let operations = ["opening the LMDB environment at /l/store", "mapping the store at /l/store"]

    @Test(arguments: operations)
    func withoutALimitMemoryIsShortAndNoLimitIsBlamed(operation: String) {
        let error = LedgerError.from(
            LMDBError(code: ENOMEM, operation: operation), store: "/l/store", addressSpaceLimit: nil)
        let text = "\(error)"
        guard case .outOfMemory(let path, let what) = error else {
            Issue.record("ENOMEM without a limit read as \(error)")
            return
        }
        #expect(path == "/l/store" && what == operation)
        #expect(text.contains("the system refused memory (ENOMEM) while \(operation)"), "\(text)")
        #expect(text.contains("no address-space limit"))
        #expect(!text.contains("Raise the limit") && !text.contains("ulimit"), "\(text)")
        #expect(!text.contains("storage failed") && !text.contains("LMDB code"))
    }

    @Test(arguments: operations)
    func underALimitTheLimitIsNamed(operation: String) {
        let error = LedgerError.from(
            LMDBError(code: ENOMEM, operation: operation), store: "/l/store", addressSpaceLimit: 4 << 30)
        guard case .addressSpace = error else {
            Issue.record("ENOMEM under a limit read as \(error)")
            return
        }
        #expect("\(error)".contains("Raise the limit"))
    }

    @Test func thisProcessesOwnLimitDecidesByDefault() {
        let error = LedgerError.from(LMDBError(code: ENOMEM, operation: "opening"), store: "/l/store")
        if AddressSpace.limit == nil {
            #expect("\(error)".contains("no address-space limit"))
        } else {
            #expect("\(error)".contains("Raise the limit"))
        }
    }
}
