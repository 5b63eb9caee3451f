import Testing

@testable import LedgerStore

/// The inspection views' tables are named by whole literals
/// (`ViewTable(whole:)`, which carry no reference count for a rebuild's
/// threads to share): each must be the name a view's part makes, and every
/// name a view's, never one of the log's own tables.
@Suite struct ViewTableNameTests {
    static let named: [(ViewTable, String)] = [
        (TableName.View.inspections, "inspections"), (TableName.View.reinspections, "reinspections"),
        (TableName.View.templates, "templates"), (TableName.View.drafts, "drafts"),
        (TableName.View.followUps, "followups"), (TableName.View.issues, "issues"),
        (TableName.View.outbox, "outbox"), (TableName.View.receptions, "receptions"),
        (TableName.View.unreportedSubmissions, "unreported_submissions"),
    ]

    @Test(arguments: named.indices)
    func aLiteralNameIsTheNameItsPartMakes(index: Int) {
        let (table, part) = Self.named[index]
        #expect(table == ViewTable(part))
        #expect(table.name == TableName.viewPrefix + part)
        #expect(TableName.isView(table.name))
    }

    @Test func noTwoViewsShareATable() {
        #expect(Set(Self.named.map(\.0.name)).count == Self.named.count)
    }
}
