import FoundationEssentials
import LedgerCore

// What the sync worker recorded: `sync.photo_uploaded`,
// `sync.inspection_accepted`, `sync.issue_accepted`, `sync.attempt_failed`,
// `sync.gave_up`, `sync.retry_requested`, `sync.dismissed`. Each payload's keys
// are its `Key` enum, which its CBOR, its JSON and its decoder share.

// MARK: - sync.photo_uploaded

extension PhotoUploaded {
    enum Key: String, PayloadKey {
        case photoID = "photo_id", serverPath = "server_path"
        static let encodedKeys = encode()
    }

    var cbor: CBORValue { Key.map([(.photoID, .text(photoID.lowercased)), (.serverPath, .text(serverPath))]) }

    var json: JSONValue { Key.object([(.photoID, .string(photoID.lowercased)), (.serverPath, .string(serverPath))]) }

    static func read(from r: inout PayloadReader) throws(DomainError) -> PhotoUploaded {
        var photoID: UUID?
        var path: String?
        for _ in 0..<(try r.mapCount()) {
            switch try r.namedKey(Key.self) {
            case .photoID?: photoID = try r.uuid(Key.photoID)
            case .serverPath?: path = try r.text()
            case nil: try r.skip()
            }
        }
        return PhotoUploaded(
            photoID: try r.required(photoID, Key.photoID), serverPath: try r.required(path, Key.serverPath))
    }
}

// MARK: - sync.inspection_accepted

extension InspectionAccepted {
    enum Key: String, PayloadKey {
        case serverID = "server_id"
        static let encodedKeys = encode()
    }

    var cbor: CBORValue { Key.map([(.serverID, .text(serverID))]) }

    var json: JSONValue { Key.object([(.serverID, .string(serverID))]) }

    static func read(from r: inout PayloadReader) throws(DomainError) -> InspectionAccepted {
        var serverID: String?
        for _ in 0..<(try r.mapCount()) {
            switch try r.namedKey(Key.self) {
            case .serverID?: serverID = try r.text()
            case nil: try r.skip()
            }
        }
        return InspectionAccepted(serverID: try r.required(serverID, Key.serverID))
    }
}

// MARK: - sync.issue_accepted

extension IssueAccepted {
    enum Key: String, PayloadKey {
        case issueID = "issue_id", serverID = "server_id", sentAgain = "sent_again_after_lost_answer"
        static let encodedKeys = encode()
    }

    var cbor: CBORValue {
        var pairs: [(Key, CBORValue)] = [(.issueID, .text(issueID.lowercased)), (.serverID, .text(serverID))]
        // Written only when true, so every other acceptance keeps its bytes.
        if sentAgainAfterLostAnswer { pairs.append((.sentAgain, .bool(true))) }
        return Key.map(pairs)
    }

    var json: JSONValue {
        var members: [(Key, JSONValue)] = [(.issueID, .string(issueID.lowercased)), (.serverID, .string(serverID))]
        if sentAgainAfterLostAnswer { members.append((.sentAgain, .bool(true))) }
        return Key.object(members)
    }

    static func read(from r: inout PayloadReader) throws(DomainError) -> IssueAccepted {
        var issueID: UUID?
        var serverID: String?
        var sentAgain = false
        for _ in 0..<(try r.mapCount()) {
            switch try r.namedKey(Key.self) {
            case .issueID?: issueID = try r.uuid(Key.issueID)
            case .serverID?: serverID = try r.text()
            case .sentAgain?: sentAgain = try r.bool()
            case nil: try r.skip()
            }
        }
        return IssueAccepted(
            issueID: try r.required(issueID, Key.issueID), serverID: try r.required(serverID, Key.serverID),
            sentAgainAfterLostAnswer: sentAgain)
    }
}

// MARK: - The item every sync event names

/// The keys of a sync event's payload: the two naming its item
/// (`item_kind`, `item_id`) and its own.
protocol SyncPayloadKey: PayloadKey {
    static var itemKind: Self { get }
    static var itemID: Self { get }
}

extension SyncItem {
    func cborPairs<Key: SyncPayloadKey>(_: Key.Type) -> [(Key, CBORValue)] {
        [(Key.itemKind, .text(kind.rawValue)), (Key.itemID, .text(id.lowercased))]
    }

    func jsonMembers<Key: SyncPayloadKey>(_: Key.Type) -> [(Key, JSONValue)] {
        [(Key.itemKind, .string(kind.rawValue)), (Key.itemID, .string(id.lowercased))]
    }
}

/// The item keys of a sync event, read as they come.
struct SyncItemKeys {
    var kind: SyncItemKind?
    var id: UUID?

    /// Reads `key` if it is one of the item keys; false if it is not.
    mutating func read<Key: SyncPayloadKey>(_ key: Key, from r: inout PayloadReader) throws(DomainError) -> Bool {
        if key == Key.itemKind {
            let name = try r.text()
            guard let parsed = SyncItemKind(rawValue: name) else { throw r.malformed("unknown item kind \"\(name)\"") }
            kind = parsed
        } else if key == Key.itemID {
            id = try r.uuid(Key.itemID)
        } else {
            return false
        }
        return true
    }

    /// Reads the next key of the map: an item key is read with its value
    /// here and a key `Key` does not list is skipped with its value (nil for
    /// both); any other is answered, its value left for the caller.
    mutating func ownKey<Key: SyncPayloadKey>(_: Key.Type, from r: inout PayloadReader) throws(DomainError) -> Key? {
        guard let key = try r.namedKey(Key.self) else {
            try r.skip()
            return nil
        }
        return try read(key, from: &r) ? nil : key
    }

    func item<Key: SyncPayloadKey>(_ r: PayloadReader, _: Key.Type) throws(DomainError) -> SyncItem {
        SyncItem(kind: try r.required(kind, Key.itemKind), id: try r.required(id, Key.itemID))
    }
}

// MARK: - sync.attempt_failed

extension SyncAttemptFailed {
    enum Key: String, SyncPayloadKey {
        case itemKind = "item_kind", itemID = "item_id", attempt, error, httpStatus = "http_status"
        case willRetry = "will_retry", nextAttemptAt = "next_attempt_at"
        static let encodedKeys = encode()
    }

    var cbor: CBORValue {
        Key.map(
            item.cborPairs(Key.self) + [
                (.attempt, .integer(Int64(attempt))), (.error, .text(error)),
                (.httpStatus, httpStatus.map { .integer(Int64($0)) } ?? .null), (.willRetry, .bool(willRetry)),
                (.nextAttemptAt, nextAttemptAt.map { .integer($0.microsecondsSinceEpoch) } ?? .null),
            ])
    }

    var json: JSONValue {
        Key.object(
            item.jsonMembers(Key.self) + [
                (.attempt, .integer(attempt)), (.error, .string(error)),
                (.httpStatus, httpStatus.map { .integer($0) } ?? .null), (.willRetry, .bool(willRetry)),
                (.nextAttemptAt, nextAttemptAt.map { .integer($0.microsecondsSinceEpoch) } ?? .null),
            ])
    }

    static func read(from r: inout PayloadReader) throws(DomainError) -> SyncAttemptFailed {
        var item = SyncItemKeys()
        var attempt: Int?
        var error: String?
        var status: Int??
        var willRetry: Bool?
        var next: Int64??
        for _ in 0..<(try r.mapCount()) {
            switch try item.ownKey(Key.self, from: &r) {
            case .attempt?: attempt = try r.int()
            case .error?: error = try r.text()
            case .httpStatus?: status = .some(try r.nullableInt())
            case .willRetry?: willRetry = try r.bool()
            case .nextAttemptAt?: next = .some(try r.isNull() ? nil : try r.int64())
            case .itemKind?, .itemID?, nil: break  // read or skipped by ownKey
            }
        }
        return SyncAttemptFailed(
            item: try item.item(r, Key.self), attempt: try r.required(attempt, Key.attempt),
            error: try r.required(error, Key.error), httpStatus: try r.required(status, Key.httpStatus),
            willRetry: try r.required(willRetry, Key.willRetry),
            nextAttemptAt: try r.required(next, Key.nextAttemptAt).map(Timestamp.init(microsecondsSinceEpoch:)))
    }
}

// MARK: - sync.gave_up

extension SyncGaveUp {
    enum Key: String, SyncPayloadKey {
        case itemKind = "item_kind", itemID = "item_id", error
        static let encodedKeys = encode()
    }

    var cbor: CBORValue { Key.map(item.cborPairs(Key.self) + [(.error, .text(error))]) }

    var json: JSONValue { Key.object(item.jsonMembers(Key.self) + [(.error, .string(error))]) }

    static func read(from r: inout PayloadReader) throws(DomainError) -> SyncGaveUp {
        var item = SyncItemKeys()
        var error: String?
        for _ in 0..<(try r.mapCount()) {
            if try item.ownKey(Key.self, from: &r) == .error { error = try r.text() }
        }
        return SyncGaveUp(item: try item.item(r, Key.self), error: try r.required(error, Key.error))
    }
}

// MARK: - sync.retry_requested

extension SyncRetryRequested {
    enum Key: String, SyncPayloadKey {
        case itemKind = "item_kind", itemID = "item_id"
        static let encodedKeys = encode()
    }

    var cbor: CBORValue { Key.map(item.cborPairs(Key.self)) }

    var json: JSONValue { Key.object(item.jsonMembers(Key.self)) }

    static func read(from r: inout PayloadReader) throws(DomainError) -> SyncRetryRequested {
        var item = SyncItemKeys()
        for _ in 0..<(try r.mapCount()) { _ = try item.ownKey(Key.self, from: &r) }
        return SyncRetryRequested(item: try item.item(r, Key.self))
    }
}

// MARK: - sync.dismissed

extension SyncDismissed {
    enum Key: String, SyncPayloadKey {
        case itemKind = "item_kind", itemID = "item_id", reason
        static let encodedKeys = encode()
    }

    var cbor: CBORValue { Key.map(item.cborPairs(Key.self) + [(.reason, .text(reason))]) }

    var json: JSONValue { Key.object(item.jsonMembers(Key.self) + [(.reason, .string(reason))]) }

    static func read(from r: inout PayloadReader) throws(DomainError) -> SyncDismissed {
        var item = SyncItemKeys()
        var reason: String?
        for _ in 0..<(try r.mapCount()) {
            if try item.ownKey(Key.self, from: &r) == .reason { reason = try r.text() }
        }
        return SyncDismissed(item: try item.item(r, Key.self), reason: try r.required(reason, Key.reason))
    }
}
