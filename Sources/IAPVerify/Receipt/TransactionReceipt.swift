// Transaction receipts of iOS 6 style (SKPaymentTransaction.transactionReceipt): base64 of an
// old-style property list whose "purchase-info" is itself base64 of a property list holding the
// transaction's fields. Apps that still send them can be told their transaction id, but nothing
// here can vouch for it: the signature is of a format only Apple's /verifyReceipt checked. The
// result is "unverified", never valid, and grants nothing.

public struct TransactionReceiptReport: Sendable {
    /// True when the transaction id was read; the verdict is then "unverified", else "malformed".
    public internal(set) var isRead: Bool
    public internal(set) var reason: String
    public internal(set) var transactionID: String?
    /// The outer list's `environment` ("Sandbox"; absent in production receipts).
    public internal(set) var environment: String?
    /// Every string field of `purchase-info`, in the receipt's order.
    public internal(set) var purchaseInfo: [(key: String, value: String)] = []

    /// Never "valid": nothing in a transaction receipt is checked.
    public var verdictName: String { isRead ? ReceiptReport.unverifiedVerdict : Verdict.malformed.rawValue }

    public func resultJSON() -> [UInt8] {
        var w = JSONWriter(capacity: 512 + purchaseInfo.count * 64)
        w.beginObject()
        w.field(ResultHeadMember.verdict, verdictName)
        w.field(ResultHeadMember.reason, reason)
        w.field(TransactionReceiptMember.trusted, false)
        w.field(TransactionReceiptMember.kind, "transaction_receipt")
        w.field(TransactionReceiptMember.transactionID, transactionID)
        w.field(TransactionReceiptMember.environment, environment)
        w.key(TransactionReceiptMember.purchaseInfo)
        if purchaseInfo.isEmpty {
            w.null()
        } else {
            w.beginObject()
            for (k, v) in purchaseInfo { w.key(text: k); w.string(v) }
            w.endObject()
        }
        w.endObject()
        return w.bytes
    }
}

public enum TransactionReceiptReader {
    /// Larger than any transaction receipt Apple issued (about 3 KB).
    static let maxBytes = 64 * 1024

    /// True when `input` looks like a transaction receipt (base64 of, or, an old-style list with
    /// `"purchase-info" =`), so that `inspect` can tell it from an app receipt or a JSON body.
    public static func looksLikeOne(_ input: UnsafeRawBufferPointer) -> Bool {
        guard input.count <= maxBytes, let text = plistText(input),
              text.first(where: { !isSpace($0) }) == UInt8(ascii: "{") else { return false }
        let key = Array("\"purchase-info\"".utf8)
        guard text.count > key.count else { return false }
        for start in 0...(text.count - key.count) where text[start..<(start + key.count)].elementsEqual(key) {
            if let next = text[(start + key.count)...].first(where: { !isSpace($0) }), next == UInt8(ascii: "=") { return true }
        }
        return false
    }

    /// Reads the transaction id; the verdict is `unverified` when it was found, else `malformed`.
    public static func read(_ input: UnsafeRawBufferPointer) -> TransactionReceiptReport {
        func refused(_ why: String) -> TransactionReceiptReport {
            TransactionReceiptReport(isRead: false, reason: why)
        }
        guard input.count > 0 else { return refused("the transaction receipt is empty") }
        guard input.count <= maxBytes else {
            return refused("the transaction receipt is \(input.count) bytes; one is a few kilobytes (at most \(maxBytes))")
        }
        guard let outerText = plistText(input) else {
            return refused("not a transaction receipt: neither an old-style property list nor base64 of one")
        }
        let outer: [(key: String, value: String)]
        switch OldStylePlist.dictionary(outerText) {
        case .success(let d): outer = d
        case .failure(let e): return refused("the transaction receipt is not a property list of strings: \(e.message)")
        }
        guard let info = outer.first(where: { $0.key == "purchase-info" })?.value else {
            return refused("the property list has no \"purchase-info\": it is not a transaction receipt")
        }
        guard let infoBytes = Base64.decode(Array(info.utf8)) else {
            return refused("\"purchase-info\" is not base64")
        }
        let fields: [(key: String, value: String)]
        switch OldStylePlist.dictionary(infoBytes) {
        case .success(let d): fields = d
        case .failure(let e): return refused("\"purchase-info\" is not a property list of strings: \(e.message)")
        }
        guard let id = fields.first(where: { $0.key == "transaction-id" })?.value else {
            return refused("\"purchase-info\" has no \"transaction-id\"")
        }
        guard !id.isEmpty, id.utf8.count <= 64, id.utf8.allSatisfy(isIDByte) else {
            return refused("\"transaction-id\" is not an id Apple issues (digits, at most 64)")
        }
        var report = TransactionReceiptReport(
            isRead: true, reason: "an iOS 6 style transaction receipt, read but not verified: its signature is of a format only Apple's /verifyReceipt checked, so grant nothing from it; look the id up with the App Store Server API (transaction_info) instead")
        report.transactionID = id
        report.environment = outer.first(where: { $0.key == "environment" })?.value
        report.purchaseInfo = fields
        return report
    }

    /// The property list's bytes: as given when they start with "{", else decoded from base64.
    private static func plistText(_ input: UnsafeRawBufferPointer) -> [UInt8]? {
        let bytes = Array(input)
        if bytes.first(where: { !isSpace($0) }) == UInt8(ascii: "{") { return bytes }
        let compact = bytes.filter { !isSpace($0) }
        return Base64.decode(compact)
    }

    static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }

    private static func isIDByte(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
            || c == UInt8(ascii: "+") || c == UInt8(ascii: "/") || c == UInt8(ascii: "=")
    }
}

/// The subset of NeXTSTEP ("old-style") property lists transaction receipts use: one dictionary
/// of `"key" = "value";` pairs, strings quoted (or bare words), with C-style escapes. Anything
/// else (nested lists, data, comments) is refused rather than skipped.
enum OldStylePlist {
    struct PlistProblem: Error { let message: String }

    static func dictionary(_ bytes: [UInt8]) -> Result<[(key: String, value: String)], PlistProblem> {
        var i = 0
        func skipSpace() { while i < bytes.count, TransactionReceiptReader.isSpace(bytes[i]) { i += 1 } }
        func expect(_ c: Character) -> Bool {
            skipSpace()
            guard i < bytes.count, bytes[i] == c.asciiValue! else { return false }
            i += 1
            return true
        }
        func string() -> String? {
            skipSpace()
            guard i < bytes.count else { return nil }
            if bytes[i] != UInt8(ascii: "\"") {
                let start = i
                while i < bytes.count, isBare(bytes[i]) { i += 1 }
                return i > start ? String(decoding: bytes[start..<i], as: UTF8.self) : nil
            }
            i += 1
            var out: [UInt8] = []
            while i < bytes.count {
                let c = bytes[i]
                i += 1
                if c == UInt8(ascii: "\"") { return String(validating: out, as: UTF8.self) }
                if c == UInt8(ascii: "\\") {
                    guard i < bytes.count else { return nil }
                    let e = bytes[i]
                    i += 1
                    switch e {
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(e)
                    default: return nil
                    }
                    continue
                }
                out.append(c)
            }
            return nil
        }
        guard expect("{") else { return .failure(PlistProblem(message: "it does not start with \"{\"")) }
        var pairs: [(key: String, value: String)] = []
        while true {
            if expect("}") { break }
            guard pairs.count < 256 else { return .failure(PlistProblem(message: "more than 256 fields")) }
            guard let key = string() else { return .failure(PlistProblem(message: "a key is not a string (byte \(i))")) }
            guard expect("=") else { return .failure(PlistProblem(message: "\"=\" is missing after \"\(key)\"")) }
            guard let value = string() else { return .failure(PlistProblem(message: "the value of \"\(key)\" is not a string")) }
            guard expect(";") else { return .failure(PlistProblem(message: "\";\" is missing after the value of \"\(key)\"")) }
            guard !pairs.contains(where: { $0.key == key }) else { return .failure(PlistProblem(message: "\"\(key)\" appears twice")) }
            pairs.append((key, value))
        }
        skipSpace()
        guard i == bytes.count else { return .failure(PlistProblem(message: "bytes follow the closing \"}\"")) }
        return .success(pairs)
    }

    private static func isBare(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
            || c == UInt8(ascii: "_") || c == UInt8(ascii: "-") || c == UInt8(ascii: ".")
    }
}
