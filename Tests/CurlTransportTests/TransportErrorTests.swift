import HTTPCore
import Testing

@Suite struct TransportErrorTests {
    @Test(arguments: [
        (TransportError.couldNotConnect(detail: "refused"), true),
        (.timedOut(detail: "after 200 ms"), true),
        (.connectionLost(detail: "empty reply"), true),
        (.tls(detail: "self-signed certificate"), false),
        (.redirectRefused(status: 302, location: "/echo"), false),
        (.invalidURL(url: "x", reason: "not http"), false),
        (.invalidHeader(name: "X", reason: "line break"), false),
        (.other(code: 27, message: "out of memory"), false),
    ])
    func transience(_ error: TransportError, _ transient: Bool) {
        #expect(error.isTransient == transient)
    }

    @Test func messagesSayWhatFailedWhyAndWhatToDo() {
        let error = TransportError.connectionLost(detail: "POST https://h/api/v1/inspections: Empty reply from server")
        #expect(
            error.description
                == "The connection was lost before a complete response arrived (POST https://h/api/v1/inspections: "
                + "Empty reply from server). The server may have received and committed the request. Try again with "
                + "the same idempotency key.")
    }
}
