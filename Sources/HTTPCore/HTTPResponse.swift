/// What the server answered, whatever the status: mapping a status to an
/// outcome (retry, refusal, success) is the caller's business, not the
/// transport's.
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    /// The final response's headers, in the order received.
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(status: Int, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }
}

// MARK: - Printing, with credentials redacted

/// A response body may hold tokens (a login's answer), so printing shows its
/// size only.
extension HTTPResponse: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { headers.printedMessage(firstLine: "HTTP \(status)", body: "\(body.count) bytes") }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["status": status, "headers": headers.description, "body": "\(body.count) bytes"])
    }
}
