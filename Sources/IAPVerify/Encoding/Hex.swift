// Lowercase or uppercase hexadecimal, for digests in results and pinned root fingerprints.

enum Hex {
    static func encode<C: Collection>(_ bytes: C, uppercase: Bool = false) -> String where C.Element == UInt8 {
        let digits = Array((uppercase ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
