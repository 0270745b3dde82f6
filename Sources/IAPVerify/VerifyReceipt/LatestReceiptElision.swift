// `latest_receipt` is a base64 copy of the whole receipt: often most of a /verifyReceipt body,
// and never needed to interpret it. Parsing it would make Jansson validate and copy every byte,
// so its value is emptied before parsing; the result only says whether it was there.
//
// Why this is safe: an unescaped `"` is always a string delimiter in JSON, and one that follows
// `{` or `,` (after optional whitespace) starts an object key. Only such a key that reads exactly
// `latest_receipt` and is followed by `:` and a string has that string's contents removed. Any
// other body is parsed unchanged, and the edited body still goes through Jansson's full check.

enum LatestReceiptElision {
    private static let key = Array("\"latest_receipt\"".utf8)

    /// The body with every `latest_receipt` string value emptied, or nil when there is none.
    static func elide(_ body: UnsafeRawBufferPointer) -> [UInt8]? {
        let n = body.count
        guard n > key.count else { return nil }
        var cuts: [Range<Int>] = []
        var i = 0
        while i + key.count <= n {
            guard body[i] == UInt8(ascii: "\""), matchesKey(body, at: i), follows(body, i) else {
                i += 1
                continue
            }
            var j = skipSpace(body, i + key.count)
            guard j < n, body[j] == UInt8(ascii: ":") else { i += 1; continue }
            j = skipSpace(body, j + 1)
            guard j < n, body[j] == UInt8(ascii: "\"") else { i += 1; continue }
            let start = j + 1
            var k = start
            while k < n, body[k] != UInt8(ascii: "\"") {
                if body[k] == UInt8(ascii: "\\") { k += 1 }
                k += 1
            }
            guard k < n else { return nil }  // unterminated: leave it to the parser to reject
            cuts.append(start..<k)
            i = k + 1
        }
        guard !cuts.isEmpty else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(n - cuts.reduce(0) { $0 + $1.count })
        var from = 0
        for cut in cuts {
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: body[from..<cut.lowerBound]))
            from = cut.upperBound
        }
        out.append(contentsOf: UnsafeRawBufferPointer(rebasing: body[from..<n]))
        return out
    }

    private static func matchesKey(_ b: UnsafeRawBufferPointer, at i: Int) -> Bool {
        for (k, byte) in key.enumerated() where b[i + k] != byte { return false }
        return true
    }

    /// True when the nearest non-space byte before `i` is `{` or `,`.
    private static func follows(_ b: UnsafeRawBufferPointer, _ i: Int) -> Bool {
        var p = i - 1
        while p >= 0, isSpace(b[p]) { p -= 1 }
        return p >= 0 && (b[p] == UInt8(ascii: "{") || b[p] == UInt8(ascii: ","))
    }

    private static func skipSpace(_ b: UnsafeRawBufferPointer, _ i: Int) -> Int {
        var j = i
        while j < b.count, isSpace(b[j]) { j += 1 }
        return j
    }

    private static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }
}
