// Reading a command's input: whole files or stdin, and telling what the bytes are (DER, base64,
// PEM, a JWS, JSON) so a command given the wrong kind says which command reads it.

import Glibc
import IAPVerify

/// An error that ends the command with exit code 2 and one line on stderr.
struct UsageFailure: Error, CustomStringConvertible {
    let description: String
}

enum IO {
    /// Reads a whole file, or stdin for "-".
    static func read(_ path: String) throws -> [UInt8] {
        let fp: UnsafeMutablePointer<FILE>? = path == "-" ? stdin : fopen(path, "rb")
        guard let fp else { throw UsageFailure(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { if path != "-" { fclose(fp) } }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, fp) }
            if n > 0 { out.append(contentsOf: chunk[0..<n]) }
            if n < chunk.count { break }
        }
        if ferror(fp) != 0 {
            throw UsageFailure(description: "cannot read \(display(path)): \(String(cString: strerror(errno)))")
        }
        return out
    }

    static func display(_ path: String) -> String { path == "-" ? "standard input" : path }

    /// What a receipt command reads: DER, base64 or a PEM PKCS#7 block (decoded to its base64 body).
    /// Anything recognisably else (JSON, a JWS, another PEM block, nothing) is a usage error that names it.
    static func readReceipt(_ path: String) throws -> [UInt8] {
        try receipt(try read(path), from: path)
    }

    /// Bytes read from `path` as a receipt: PEM unwrapped; JSON, a JWS and empty input refused.
    static func receipt(_ input: [UInt8], from path: String) throws -> [UInt8] {
        let name = display(path)
        let (kind, bytes) = Input.kind(of: input)
        switch kind {
        case .der, .text:
            return bytes
        case .empty:
            throw UsageFailure(description: "\(name) is empty: give a receipt file (DER, base64 or PEM)")
        case .json:
            throw UsageFailure(description: "\(name) is JSON, not a receipt: a /verifyReceipt response body is read by "
                + "`iapverify response \(path)`, stored transactions by `iapverify entitlements \(path)`; "
                + "from a /verifyReceipt request body, pass the receipt-data value")
        case .jws:
            throw UsageFailure(description: "\(name) is a StoreKit 2 JWS, not a receipt: verify it with `iapverify jws \(path)`")
        case .pem:
            guard let pem = PEM.block(bytes[...]) else { return bytes }
            guard PEM.receiptLabels.contains(pem.label) else {
                throw UsageFailure(description: "\(name) is a PEM \"\(pem.label)\" block, not a receipt: give the receipt as "
                    + "DER, base64 or PEM \"PKCS7\"")
            }
            return pem.body
        }
    }

    /// Bytes read from `path` as a compact JWS, trimmed; a receipt and empty input refused.
    static func jws(_ input: [UInt8], from path: String) throws -> [UInt8] {
        let name = display(path)
        let (kind, bytes) = Input.kind(of: input)
        if kind == .empty {
            throw UsageFailure(description: "\(name) is empty: give a compact JWS (header.payload.signature)")
        }
        if Input.isReceipt(kind, bytes) {
            throw UsageFailure(description: "\(name) is a receipt, not a JWS: verify it with `iapverify receipt \(path)`")
        }
        return bytes
    }

    /// Bytes read from `path` for a command that reads JSON, as they are; a receipt or a JWS refused.
    static func json(_ input: [UInt8], from path: String) throws -> [UInt8] {
        let name = display(path)
        let (kind, bytes) = Input.kind(of: input)
        if Input.isReceipt(kind, bytes) {
            throw UsageFailure(description: "\(name) is a receipt, not JSON: verify it with `iapverify receipt \(path)`")
        }
        if kind == .jws {
            throw UsageFailure(description: "\(name) is a StoreKit 2 JWS, not JSON: verify it with `iapverify jws \(path)`")
        }
        return input
    }

    static func printJSON(_ json: [UInt8], pretty: Bool) {
        let bytes = pretty ? JSONFormatting.pretty(json) : json
        bytes.withUnsafeBytes { _ = fwrite($0.baseAddress, 1, $0.count, stdout) }
        fputs("\n", stdout)
        fflush(stdout)
    }

    static func warn(_ line: String) { fputs("iapverify: \(line)\n", stderr) }
}

/// PEM armour: `-----BEGIN LABEL-----`, base64 lines (headers such as `Proc-Type:` are skipped),
/// `-----END LABEL-----`. The library reads the base64 body of a receipt as it is.
enum PEM {
    static let receiptLabels: Set<String> = ["PKCS7", "PKCS #7 SIGNED DATA", "CMS"]

    static func block(_ input: ArraySlice<UInt8>) -> (label: String, body: [UInt8])? {
        let begin = Array("-----BEGIN ".utf8)
        guard input.starts(with: begin) else { return nil }
        let lines = input.split(separator: 0x0A, omittingEmptySubsequences: false).map { line -> ArraySlice<UInt8> in
            var l = line
            while let last = l.last, last == 0x0D || last == 0x20 || last == 0x09 { l.removeLast() }
            return l
        }
        guard let first = lines.first, first.count > begin.count + 5, first.suffix(5).elementsEqual("-----".utf8) else {
            return nil
        }
        let label = String(decoding: first.dropFirst(begin.count).dropLast(5), as: UTF8.self)
        var body: [UInt8] = []
        for line in lines.dropFirst() {
            if line.starts(with: "-----END ".utf8) { return (label, body) }
            if line.contains(UInt8(ascii: ":")) { continue }
            body.append(contentsOf: line)
        }
        return (label, body)   // no END line: the library judges what is there
    }
}

/// What an input holds, told the same way for every command from the bytes as read: binary DER
/// (a first byte 0x30, a SEQUENCE) is kept byte for byte, since whitespace bytes at its ends are
/// part of it; text (base64, PEM, a JWS, JSON) loses its surrounding whitespace.
enum Input {
    enum Kind { case empty, der, json, pem, jws, text }

    static func kind(of input: [UInt8]) -> (kind: Kind, bytes: [UInt8]) {
        if input.first == 0x30 { return (.der, input) }
        let space: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        guard let start = input.firstIndex(where: { !space($0) }), let end = input.lastIndex(where: { !space($0) }) else {
            return (.empty, [])
        }
        let bytes = Array(input[start...end])
        if bytes[0] == UInt8(ascii: "{") || bytes[0] == UInt8(ascii: "[") { return (.json, bytes) }
        if bytes.starts(with: "-----BEGIN ".utf8) { return (.pem, bytes) }
        // A compact JWS starts with the base64url of '{"' ("ey") and holds dots.
        if bytes.starts(with: "ey".utf8) && bytes.contains(UInt8(ascii: ".")) { return (.jws, bytes) }
        return (.text, bytes)
    }

    /// A receipt: DER, base64 DER (a SEQUENCE is "MI" in base64) or a PEM PKCS#7 block. A receipt
    /// is longer than 127 bytes, so its length byte has the high bit set ("0" alone is JSON).
    static func isReceipt(_ kind: Kind, _ bytes: [UInt8]) -> Bool {
        switch kind {
        case .der: return bytes.count > 1 && bytes[1] >= 0x80
        case .text: return bytes.starts(with: "MI".utf8)
        case .pem: return PEM.block(bytes[...]).map { PEM.receiptLabels.contains($0.label) } ?? false
        default: return false
        }
    }
}
