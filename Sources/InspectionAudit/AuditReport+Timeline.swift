import FoundationEssentials
import InspectionDomain
import LedgerCore

extension AuditReport {
    /// The timeline exactly as the text report prints it (a heading, then
    /// each event up to the report's moment), for renderings that show the
    /// timeline beside something else (`jqc audit --as-of` in text).
    public var timelineTextLines: [String] {
        let bound = asOf.map { " up to position \($0.position)" } ?? ""
        return ["TIMELINE (\(timeline.entries.count) events\(bound); old → new for every answer changed)"]
            + timeline.entries.flatMap { timelineLines($0) }
    }

    /// The stored chain hash of the record at `position` (hex), if it was read.
    public func chainHash(at position: UInt64) -> String? {
        chainHashes[position]?.hex
    }

    /// What a failed chain check still proves, in words: "records 1–N are
    /// proven unchanged", or, when nothing is (a digest that does not match,
    /// a first record that fails), that no record is.
    public var provenUnchanged: String {
        chain.verifiedThrough == 0
            ? "no record is proven unchanged"
            : chain.verifiedThrough == 1
                ? "record 1 is proven unchanged" : "records 1–\(chain.verifiedThrough) are proven unchanged"
    }
}
