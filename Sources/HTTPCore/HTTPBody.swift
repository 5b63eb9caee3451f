/// What a request carries after its headers.
public enum HTTPBody: Sendable, Equatable {
    /// No body. POST, PUT and PATCH still send `Content-Length: 0`.
    case empty
    /// Bytes of one media type, such as a JSON document.
    case bytes([UInt8], contentType: String)
    /// A `multipart/form-data` form; the transport chooses the boundary and
    /// sets the `Content-Type` that names it.
    case multipart([MultipartPart])

    /// A JSON document already encoded as UTF-8.
    public static func json(_ bytes: [UInt8]) -> HTTPBody {
        .bytes(bytes, contentType: "application/json")
    }

    /// The number of bytes of content (for multipart, of the parts' data).
    public var byteCount: Int {
        switch self {
        case .empty: 0
        case .bytes(let bytes, _): bytes.count
        case .multipart(let parts): parts.reduce(0) { $0 + $1.data.count }
        }
    }
}

/// One part of a `multipart/form-data` body: a form field or a file.
public struct MultipartPart: Sendable, Equatable {
    /// The form field's name (`file`, `entity_type`).
    public var name: String
    /// The file name the server sees, for a file part.
    public var filename: String?
    /// The part's media type; without one, the server assumes `text/plain`.
    public var contentType: String?
    public var data: [UInt8]

    public init(name: String, filename: String? = nil, contentType: String? = nil, data: [UInt8]) {
        self.name = name
        self.filename = filename
        self.contentType = contentType
        self.data = data
    }

    /// A plain text field.
    public static func field(_ name: String, _ value: String) -> MultipartPart {
        MultipartPart(name: name, data: Array(value.utf8))
    }

    /// A file, with the name and media type the server should record.
    public static func file(_ name: String, filename: String, contentType: String, data: [UInt8]) -> MultipartPart {
        MultipartPart(name: name, filename: filename, contentType: contentType, data: data)
    }
}

// MARK: - Printing: sizes, never content

/// A body may hold a password (a login) or a token (a refresh), so printing
/// one shows its shape and size only.
extension HTTPBody: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        switch self {
        case .empty:
            "no body"
        case .bytes(let bytes, let contentType):
            "\(bytes.count) bytes of \(contentType)"
        case .multipart(let parts):
            "multipart form: " + parts.map(\.description).joined(separator: ", ")
        }
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror { Mirror(self, children: ["body": description]) }
}

extension MultipartPart: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        var text = "\(name)"
        if let filename { text += " (file \(filename))" }
        if let contentType { text += " \(contentType)" }
        return text + " \(data.count) bytes"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror { Mirror(self, children: ["part": description]) }
}
