import Foundation
import LMDB
import LedgerCore
import LedgerTestSupport
import Testing

@_spi(RawAppend) @testable import LedgerStore

/// A rebuild puts a key greater than any it put before at the end of the
/// table it emptied, and skips deleting a key no put can have left there
/// (`EmptiedTables`). Whatever order a view writes in, the rows are those of
/// the same puts and deletes made one by one.
@Suite struct EmptiedTablesTests {
    let directory = TemporaryDirectory(prefix: "emptied-tables")

    /// What the rebuild's table holds before its view writes, besides the
    /// rows emptied from it.
    enum Write: Sendable, CustomStringConvertible {
        case put(String, String)
        case delete(String)

        var description: String {
            switch self {
            case .put(let key, let value): "put \(key)=\(value)"
            case .delete(let key): "delete \(key)"
            }
        }
    }

    /// A view whose rebuild writes `writes` into its one table, in order.
    final class ScriptedView: Projection, Sendable {
        let name = "scripted"
        let version = 1
        let foldsByStream = false
        static let table = ViewTable("scripted")
        var tableNames: [ViewTable] { [Self.table] }
        let writes: [Write]

        init(_ writes: [Write]) { self.writes = writes }

        func apply(_ record: EventRecord, in context: ProjectionContext) throws {}

        func makeRebuilder(scratch: ProjectionScratch) -> any ProjectionRebuilder { Rebuilder(writes: writes) }

        struct Rebuilder: ProjectionRebuilder {
            let writes: [Write]
            mutating func consume(_ record: EventRecord) throws {}
            func write(in context: ProjectionContext) throws {
                for write in writes {
                    switch write {
                    case .put(let key, let value):
                        try context.put(ScriptedView.table, Array(key.utf8), Array(value.utf8))
                    case .delete(let key): try context.delete(ScriptedView.table, Array(key.utf8))
                    }
                }
            }
        }
    }

    /// Writes and the rows they leave: in order, out of order, a delete of
    /// a key put before (in order and out of it), of one never put, of the
    /// greatest, an overwrite, keys that are prefixes of others.
    static let cases: [([Write], [String: String])] = [
        ([.put("a", "1"), .put("b", "2"), .put("c", "3")], ["a": "1", "b": "2", "c": "3"]),
        ([.put("c", "3"), .put("a", "1"), .put("b", "2")], ["a": "1", "b": "2", "c": "3"]),
        ([.put("a", "1"), .put("b", "2"), .delete("a")], ["b": "2"]),
        ([.put("b", "2"), .put("a", "1"), .delete("a"), .put("c", "3")], ["b": "2", "c": "3"]),
        ([.delete("a"), .put("a", "1"), .delete("z")], ["a": "1"]),
        ([.put("a", "1"), .put("b", "2"), .delete("b"), .put("b", "4")], ["a": "1", "b": "4"]),
        ([.put("a", "1"), .put("a", "5")], ["a": "5"]),
        ([.put("ab", "1"), .put("a", "2"), .put("abc", "3"), .delete("ab")], ["a": "2", "abc": "3"]),
        ([.delete("x"), .delete("y")], [:]),
    ]

    @Test(arguments: cases.indices)
    func aRebuildLeavesTheRowsOfItsWritesInOrder(index: Int) throws {
        let (writes, expected) = Self.cases[index]
        let log = try EventLog(directory: directory.appending("store"))
        defer { log.close() }
        let view = ScriptedView(writes)
        let views = try ProjectionSet(log: log, projections: [view])
        // Rows from before, which the rebuild empties away first.
        try log.write { writer in
            try views.context(writer).put(ScriptedView.table, Array("zz".utf8), Array("old".utf8))
            try views.context(writer).put(ScriptedView.table, Array("a".utf8), Array("old".utf8))
        }
        try views.rebuild()
        let stored = try log.read { reader in
            var rows: [String: String] = [:]
            try reader.transaction.forEach(try log.table(ScriptedView.table.name)) { key, value in
                let opened = try ViewRowChecksum.open(
                    view: view.name, table: ScriptedView.table.name, key: key, stored: value)
                rows[String(decoding: key, as: UTF8.self)] = String(decoding: opened, as: UTF8.self)
                return true
            }
            return rows
        }
        #expect(stored == expected, "\(writes)")
    }

    /// The rule itself: a key extends a table it emptied when it sorts
    /// after every key put since (LMDB's order: bytes, then the shorter
    /// first), and nothing put can sit under a key that sorts after them all.
    @Test func theGreatestKeyDecidesBetweenAppendingAndLooking() {
        let emptied = EmptiedTables(["t", "t"])
        #expect(emptied.cannotHold(Array("a".utf8), in: "t"))
        #expect(emptied.extends("t", with: Array("b".utf8)))
        #expect(!emptied.extends("t", with: Array("a".utf8)))
        #expect(!emptied.extends("t", with: Array("b".utf8)))
        #expect(!emptied.cannotHold(Array("a".utf8), in: "t"))
        #expect(!emptied.cannotHold(Array("b".utf8), in: "t"))
        #expect(emptied.cannotHold(Array("ba".utf8), in: "t"))
        #expect(emptied.extends("t", with: Array("ba".utf8)))
        #expect(!emptied.cannotHold(Array("b".utf8), in: "t"))
        // A table the rebuild did not empty: neither.
        #expect(!emptied.extends("other", with: Array("z".utf8)))
        #expect(!emptied.cannotHold(Array("z".utf8), in: "other"))
    }
}
