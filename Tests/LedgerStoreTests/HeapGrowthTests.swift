import Testing

@testable import LedgerStore

/// `jqc rebuild` asks glibc to grow the process's heaps in large steps
/// (`HeapGrowth`, through `FoldMemory.leftToExit`): the setting must reach
/// the allocator, or the binding is wrong.
@Suite struct HeapGrowthTests {
    @Test func glibcTakesTheLargeSteps() {
        #expect(HeapGrowth.step == 64 << 20)
        #expect(HeapGrowth.inLargeSteps())
        // Asked again (a second rebuild in the same process), still taken.
        #expect(HeapGrowth.inLargeSteps())
    }
}
