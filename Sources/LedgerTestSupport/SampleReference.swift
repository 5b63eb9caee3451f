import Foundation

/// The sample facilities and templates of `Tools/fixtures`, and tiny images.
public enum SampleReference {
    /// `{"facilities": [...], "templates": [...]}` as `jqc pull --from` reads it.
    public static let path = Products.repositoryFile("Tools/fixtures/reference.json")

    /// A valid PNG of `width`×`height` pixels of one colour; different
    /// colours give different bytes (and hashes).
    public static func png(width: Int = 2, height: Int = 2, red: UInt8 = 200) -> Data {
        var raw: [UInt8] = []
        for _ in 0..<height {
            raw.append(0)
            for _ in 0..<width { raw += [red, 30, 30] }
        }
        // Stored (uncompressed) deflate blocks keep this free of zlib.
        var deflate: [UInt8] = [0x78, 0x01, 0x01]
        let length = UInt16(raw.count)
        deflate += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
        deflate += raw
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in raw {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        deflate += bigEndian(b << 16 | a)
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        png += chunk("IHDR", bigEndian(UInt32(width)) + bigEndian(UInt32(height)) + [8, 2, 0, 0, 0])
        png += chunk("IDAT", deflate)
        png += chunk("IEND", [])
        return Data(png)
    }

    /// Writes a PNG into `directory` and returns its path.
    public static func writePNG(in directory: String, name: String, red: UInt8 = 200) throws -> String {
        let path = directory + "/" + name
        try png(red: red).write(to: URL(fileURLWithPath: path))
        return path
    }

    private static func bigEndian(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        return bigEndian(UInt32(data.count)) + typeBytes + data + bigEndian(crc32(typeBytes + data))
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
