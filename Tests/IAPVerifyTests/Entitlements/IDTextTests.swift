import XCTest
@testable import IAPVerify

/// Ids held inline (ASCII up to 23 bytes) or as Strings must compare and intern exactly as the
/// Strings they stand for, and order as their UTF-8 bytes: across the inline edge, with NULs and
/// prefixes, and with non-ASCII text that String equality joins to ASCII (canonical equivalence).
final class IDTextTests: XCTestCase {
    private let texts: [String] = {
        var t = ["", "\u{0}", "a", "a\u{0}", "a\u{0}b", "ab", "b", "K", "\u{212A}", "\u{C5}", "\u{212B}", "A\u{30A}",
                 "1000000637840752", "1000000637840753", "999999999999999", "2000000000000000000", "12a", "caf\u{E9}",
                 "cafe\u{301}", "~", "\u{7F}", "Z", "z"]
        for n in [15, 16, 22, 23, 24, 25, 31] {
            t.append(String(repeating: "7", count: n))
            t.append(String(repeating: "7", count: n - 1) + "8")
            t.append(String(repeating: "x", count: n))
        }
        return t
    }()

    func testEqualityAndOrderAreString() {
        for a in texts {
            XCTAssertEqual(IDText(a).string, a)
            XCTAssertEqual(IDText(a).isInline, a.utf8.count <= 23 && a.utf8.allSatisfy { $0 < 0x80 }, a)
            Array(a.utf8).withUnsafeBufferPointer { XCTAssertEqual(IDText(utf8: $0), IDText(a), a) }
            for b in texts {
                XCTAssertEqual(IDText(a) == IDText(b), a == b, "\(a.debugDescription) == \(b.debugDescription)")
                XCTAssertEqual(IDText(a) < IDText(b), a.utf8.lexicographicallyPrecedes(b.utf8), "\(a.debugDescription) < \(b.debugDescription)")
                // The id order, written out: runs of digits first, by length then bytes; other text
                // after them, by bytes.
                let digits = { (t: String) in t.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }
                let expected = digits(a) != digits(b) ? digits(a)
                    : digits(a) && a.utf8.count != b.utf8.count ? a.utf8.count < b.utf8.count
                    : a.utf8.lexicographicallyPrecedes(b.utf8)
                XCTAssertEqual(IDText.idLess(IDText(a), IDText(b)), expected, "\(a.debugDescription) idLess \(b.debugDescription)")
            }
        }
    }

    func testTheIdOrderIsTotal() {
        // Irreflexive, asymmetric and transitive on every triple, and two texts are unordered only
        // when their bytes are equal: ties between purchases never fall to the order of the input.
        let all = texts + ["2", "10", "1a", "0!", "00", "9", "a1", "11"]
        let less = { (a: String, b: String) in IDText.idLess(IDText(a), IDText(b)) }
        for a in all {
            XCTAssertFalse(less(a, a), a.debugDescription)
            for b in all {
                XCTAssertFalse(less(a, b) && less(b, a), "\(a.debugDescription) \(b.debugDescription)")
                if !less(a, b), !less(b, a) { XCTAssertTrue(a.utf8.elementsEqual(b.utf8), "\(a.debugDescription) \(b.debugDescription)") }
                for c in all where less(a, b) && less(b, c) {
                    XCTAssertTrue(less(a, c), "\(a.debugDescription) < \(b.debugDescription) < \(c.debugDescription)")
                }
            }
        }
    }

    func testInterningAgreesWithADictionaryOfStrings() {
        // All inline (the short list, then the table past seven names), then a String joining them.
        var orders: [[String]] = [texts.filter { IDText($0).isInline }, texts, texts.reversed()]
        orders.append((0..<40).map { "\(1_000_000_000_000_000 + ($0 * 7) % 23)" } + ["\u{212A}", "K"])
        orders.append((0..<300).map { "\(1_000_000_000_000_000 + ($0 * 7) % 211)" })
        // Probe budgets: a very negative slack gives up on the word table at its first collision
        // (the path crafted ids take), so ids seen before and after the switch to String keys must
        // keep their numbers.
        for slack in [256, 0, -40, -1_000_000] {
            for list in orders {
                var table = IDInternTable(slack: slack)
                var plain: [String: Int] = [:]
                for t in list + list {
                    let expected = plain[t] ?? plain.count
                    plain[t] = expected
                    XCTAssertEqual(table.id(IDText(t)), expected, "\(t.debugDescription), slack \(slack)")
                }
                XCTAssertEqual(table.count, plain.count)
            }
        }
    }

    func testHonestIdsStayOnTheWordTable() {
        // Apple's ids are consecutive numbers: chance probe runs of twenty and more occur in big
        // tables, and must not be taken for crafted ids.
        var table = IDInternTable()
        for i in 0..<50_000 { _ = table.id(IDText("\(1_000_000_000_000_000 + i)")) }
        for i in 0..<50_000 { _ = table.id(IDText("\(2_000_000_000_000_000 + 7 * i)")) }
        XCTAssertEqual(table.count, 100_000)
        XCTAssertFalse(table.keyedByString)
        var crafted = IDInternTable(slack: -1_000_000)
        for i in 0..<100 { _ = crafted.id(IDText("\(i)")) }
        XCTAssertTrue(crafted.keyedByString)
    }

    func testInlineKeysAreTheInlineTexts() {
        for a in texts {
            let key = Array(a.utf8).withUnsafeBufferPointer { IDText.inlineKey(utf8: $0) }
            XCTAssertEqual(key, IDText(a).inlineKey, a.debugDescription)
            // The hash is a function of the key alone.
            if let key { XCTAssertEqual(key.hash(IDText.InlineKey.seed), IDText(a).inlineKey!.hash(IDText.InlineKey.seed)) }
        }
    }
}
