import Foundation
import LedgerCore

// MARK: - Decoding the sync worker's outcomes

extension PhotoUploaded {
    static func read(from r: inout PayloadReader) throws(DomainError) -> PhotoUploaded {
        var photoID: UUID?
        var path: String?
        for _ in 0..<(try r.mapCount()) {
            switch try r.text() {
            case "photo_id": photoID = try r.uuid("photo_id")
            case "server_path": path = try r.text()
            default: try r.skip()
            }
        }
        return PhotoUploaded(
            photoID: try r.required(photoID, "photo_id"), serverPath: try r.required(path, "server_path"))
    }
}

extension InspectionAccepted {
    static func read(from r: inout PayloadReader) throws(DomainError) -> InspectionAccepted {
        var serverID: String?
        for _ in 0..<(try r.mapCount()) {
            switch try r.text() {
            case "server_id": serverID = try r.text()
            default: try r.skip()
            }
        }
        return InspectionAccepted(serverID: try r.required(serverID, "server_id"))
    }
}

extension IssueAccepted {
    static func read(from r: inout PayloadReader) throws(DomainError) -> IssueAccepted {
        var issueID: UUID?
        var serverID: String?
        var sentAgain = false
        for _ in 0..<(try r.mapCount()) {
            switch try r.text() {
            case "issue_id": issueID = try r.uuid("issue_id")
            case "server_id": serverID = try r.text()
            case "sent_again_after_lost_answer": sentAgain = try r.bool()
            default: try r.skip()
            }
        }
        return IssueAccepted(
            issueID: try r.required(issueID, "issue_id"), serverID: try r.required(serverID, "server_id"),
            sentAgainAfterLostAnswer: sentAgain)
    }
}

/// The keys every sync event shares, read as they come.
struct SyncItemKeys {
    var kind: SyncItemKind?
    var id: UUID?

    /// Reads `key` if it is one of the item keys; false if it is not.
    mutating func read(_ key: String, from r: inout PayloadReader) throws(DomainError) -> Bool {
        switch key {
        case "item_kind":
            let name = try r.text()
            guard let parsed = SyncItemKind(rawValue: name) else { throw r.malformed("unknown item kind \"\(name)\"") }
            kind = parsed
        case "item_id": id = try r.uuid("item_id")
        default: return false
        }
        return true
    }

    func item(_ r: PayloadReader) throws(DomainError) -> SyncItem {
        SyncItem(kind: try r.required(kind, "item_kind"), id: try r.required(id, "item_id"))
    }
}

extension SyncAttemptFailed {
    static func read(from r: inout PayloadReader) throws(DomainError) -> SyncAttemptFailed {
        var item = SyncItemKeys()
        var attempt: Int?
        var error: String?
        var status: Int??
        var willRetry: Bool?
        var next: Int64??
        for _ in 0..<(try r.mapCount()) {
            let key = try r.text()
            if try item.read(key, from: &r) { continue }
            switch key {
            case "attempt": attempt = try r.int()
            case "error": error = try r.text()
            case "http_status": status = .some(try r.nullableInt())
            case "will_retry": willRetry = try r.bool()
            case "next_attempt_at": next = .some(try r.isNull() ? nil : try r.int64())
            default: try r.skip()
            }
        }
        return SyncAttemptFailed(
            item: try item.item(r), attempt: try r.required(attempt, "attempt"), error: try r.required(error, "error"),
            httpStatus: try r.required(status, "http_status"), willRetry: try r.required(willRetry, "will_retry"),
            nextAttemptAt: try r.required(next, "next_attempt_at").map(Timestamp.init(microsecondsSinceEpoch:)))
    }
}

extension SyncGaveUp {
    static func read(from r: inout PayloadReader) throws(DomainError) -> SyncGaveUp {
        var item = SyncItemKeys()
        var error: String?
        for _ in 0..<(try r.mapCount()) {
            let key = try r.text()
            if try item.read(key, from: &r) { continue }
            switch key {
            case "error": error = try r.text()
            default: try r.skip()
            }
        }
        return SyncGaveUp(item: try item.item(r), error: try r.required(error, "error"))
    }
}

extension SyncRetryRequested {
    static func read(from r: inout PayloadReader) throws(DomainError) -> SyncRetryRequested {
        var item = SyncItemKeys()
        for _ in 0..<(try r.mapCount()) {
            let key = try r.text()
            if try !item.read(key, from: &r) { try r.skip() }
        }
        return SyncRetryRequested(item: try item.item(r))
    }
}

extension SyncDismissed {
    static func read(from r: inout PayloadReader) throws(DomainError) -> SyncDismissed {
        var item = SyncItemKeys()
        var reason: String?
        for _ in 0..<(try r.mapCount()) {
            let key = try r.text()
            if try item.read(key, from: &r) { continue }
            switch key {
            case "reason": reason = try r.text()
            default: try r.skip()
            }
        }
        return SyncDismissed(item: try item.item(r), reason: try r.required(reason, "reason"))
    }
}
