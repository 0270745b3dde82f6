import XCTest
@testable import IAPVerify

/// Receipts arrive as base64. The in-place path for plain one-line base64 must give exactly what
/// the permissive pass gives, for every input it takes, and decline everything else.
final class Base64InputTests: XCTestCase {
    private func both(_ text: [UInt8]) -> (plain: [UInt8]?, permissive: [UInt8]?, decode: [UInt8]?) {
        text.withUnsafeBytes { (Base64.decodePlain($0), Base64.decodePermissive($0), Base64.decode($0)) }
    }

    func testPlainPathAgreesWithThePermissivePass() throws {
        var inputs: [[UInt8]] = []
        for file in ["receipts/sandbox_2020-05-06_com.nutcall.alert_187iap.der", "receipts/production_2015-09-16_com.mustafadur.Kargotakip.der"] {
            let der = try Fixtures.data(file)
            inputs.append(Array(Base64.encode(der).utf8))
        }
        // Every length with and without padding, and the shapes the permissive pass handles.
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var seed: UInt64 = 0x9E3779B97F4A7C15
        func next() -> Int { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return Int(seed >> 33) }
        for length in 0..<40 {
            let raw = (0..<length).map { _ in UInt8(truncatingIfNeeded: next()) }
            let text = Array(Base64.encode(raw).utf8)
            inputs.append(text)
            inputs.append(Array(text.filter { $0 != UInt8(ascii: "=") }))
            inputs.append(text + Array("=".utf8))
            inputs.append(text + Array("\n".utf8))
            inputs.append(text.map { $0 == UInt8(ascii: "+") ? UInt8(ascii: "-") : $0 == UInt8(ascii: "/") ? UInt8(ascii: "_") : $0 })
            if !text.isEmpty {
                var broken = text
                broken[next() % broken.count] = [UInt8(ascii: "="), UInt8(ascii: "*"), 0x80, UInt8(ascii: " ")][next() % 4]
                inputs.append(broken)
            }
            let random = (0..<(length * 4)).map { _ in alphabet[next() % alphabet.count] }
            inputs.append(random)
            // Padding after characters whose unused bits are not zero ("QR==", "QUJ="): ignored.
            if length > 0 {
                inputs.append(random.dropLast(1) + Array("=".utf8))
                inputs.append(random.dropLast(2) + Array("==".utf8))
            }
        }
        inputs += ["====", "A===", "AA==", "AAA=", "AB=C", "AAAA====", "", "A", "QR==", "QUJ=", "//==", "++8=", "AA=A", "=AAA"].map { Array($0.utf8) }
        var plainTaken = 0
        for text in inputs {
            let r = both(text)
            XCTAssertEqual(r.decode, r.permissive, "\(String(decoding: text.prefix(60), as: UTF8.self))")
            if let p = r.plain {
                plainTaken += 1
                XCTAssertEqual(p, r.permissive, "\(String(decoding: text.prefix(60), as: UTF8.self))")
            }
        }
        XCTAssertGreaterThan(plainTaken, 60)   // the fast path is the common one
    }
    /// Every byte value in every position of a quad (each position has its own table), in the
    /// middle of a text and in its last quad: taken only when it is in the alphabet, and then
    /// decoded as OpenSSL decodes it.
    func testEveryByteInEveryPositionOfAQuad() {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        for position in 0..<4 {
            for b in 0...255 {
                for last in [false, true] {
                    var text = Array("QUJDREVGR0hJSktM".utf8)   // four quads
                    let at = (last ? 12 : 4) + position
                    text[at] = UInt8(b)
                    let r = both(text)
                    if alphabet.contains(UInt8(b)) {
                        XCTAssertNotNil(r.plain, "byte \(b) at \(at)")
                        XCTAssertEqual(r.plain, r.permissive, "byte \(b) at \(at)")
                    } else if b != UInt8(ascii: "=") || !last || position < 3 {
                        XCTAssertNil(r.plain, "byte \(b) at \(at)")
                    } else {
                        XCTAssertEqual(r.plain, r.permissive, "padding at \(at)")   // "QUJD...SktM" ending "Skt="
                    }
                }
            }
        }
    }

    /// Texts long enough for the AVX2 bulk (32 characters a step): every byte value at every
    /// position of three steps and a tail, each text taken only when all of it is in the alphabet,
    /// then decoded as OpenSSL decodes it; and every length around the step size.
    func testTheBulkStepsAgreeWithOpenSSL() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var seed: UInt64 = 0x5DEECE66D
        func next() -> Int { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return Int(seed >> 33) }
        let text = (0..<108).map { _ in alphabet[next() % 64] }   // three steps and a tail of 12
        let inAlphabet = Set(alphabet)
        for at in text.indices {
            for b in 0...255 {
                var mutant = text
                mutant[at] = UInt8(b)
                let r = both(mutant)
                if inAlphabet.contains(UInt8(b)) || (b == Int(UInt8(ascii: "=")) && at == text.count - 1) {
                    XCTAssertNotNil(r.plain, "byte \(b) at \(at)")   // a final "=" is padding
                    XCTAssertEqual(r.plain, r.permissive, "byte \(b) at \(at)")
                } else {
                    XCTAssertNil(r.plain, "byte \(b) at \(at)")
                }
            }
        }
        // Every length from 1 to 200 decoded bytes: bulk, tail and padding meet at every offset.
        for length in 1...200 {
            let raw = (0..<length).map { _ in UInt8(truncatingIfNeeded: next()) }
            let encoded = Array(Base64.encode(raw).utf8)
            let r = both(encoded)
            XCTAssertEqual(r.plain, raw, "length \(length)")
            XCTAssertEqual(r.permissive, raw, "length \(length)")
        }
    }
}
