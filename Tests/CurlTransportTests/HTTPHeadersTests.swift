import HTTPCore
import Testing

@Suite struct HTTPHeadersTests {
    @Test func fieldsKeepTheirOrderAndNamesIgnoreCase() {
        var headers: HTTPHeaders = ["Set-Cookie": "a=1", "Accept": "application/json", "set-cookie": "b=2"]
        #expect(headers.fields.map(\.name) == ["Set-Cookie", "Accept", "set-cookie"])
        #expect(headers["ACCEPT"] == "application/json")
        #expect(headers.values(for: "Set-Cookie") == ["a=1", "b=2"])
        headers.set("SET-COOKIE", "c=3")
        #expect(headers.values(for: "set-cookie") == ["c=3"])
        #expect(headers.fields.map(\.name) == ["Accept", "SET-COOKIE"])
        headers.remove("accept")
        #expect(!headers.contains("Accept"))
    }
}
