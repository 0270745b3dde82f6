import XCTest
@testable import IAPVerify

/// One record per transaction id, for lists short (compared pairwise) and long (through a table),
/// with and without repeated ids: checked against reading every record in order and keeping, per
/// id, the one `prefersSecond` picks. (Two records with one id that tie on every field
/// `prefersSecond` reads, yet differ elsewhere, keep the first one read: there the input order
/// still decides.)
final class DeduplicationTests: XCTestCase {
    private func oracle(_ input: [Transaction]) -> [Transaction] {
        var best: [String: Transaction] = [:]
        for t in input {
            if let b = best[t.transactionID] { if Transaction.prefersSecond(b, t, nowMs: 0) { best[t.transactionID] = t } } else { best[t.transactionID] = t }
        }
        return best.values.sorted { a, b in
            let pa = a.purchaseDateMs ?? Int64.min, pb = b.purchaseDateMs ?? Int64.min
            return pa != pb ? pa < pb : a.transactionID.utf8.lexicographicallyPrecedes(b.transactionID.utf8)
        }
    }

    func testShortAndLongListsWithAndWithoutRepeats() {
        var seed: UInt64 = 7
        func next(_ n: Int) -> Int { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return Int(seed >> 33) % n }
        var repeated = 0
        // Pairwise up to 16, ordered by id up to 256, a table beyond.
        for length in Array(0...40) + [255, 256, 257, 300] {
            for round in 0..<25 {
                // Round 0: unique ids; later rounds draw ids from a pool smaller than the list.
                // Every fifth round writes some ids with a Kelvin sign, which String equality
                // takes for K (those ids are held as Strings), and some longer than 23 bytes.
                let pool = round == 0 ? length + 1 : max(1, length / 2 + next(4))
                var list: [Transaction] = []
                var ids = Set<String>()
                for k in 0..<length {
                    var id = round == 0 ? "10000000\(k)" : "10000000\(next(pool))"
                    if round % 5 == 4 {
                        switch next(3) {
                        case 0: id = "K" + id
                        case 1: id = "\u{212A}" + id
                        default: id = "long-prefix-past-the-inline-size-" + id
                        }
                    }
                    var t = Transaction(transactionID: id, productID: "p\(next(3))")
                    t.purchaseDateMs = Int64(1_000 * next(5))
                    t.expiresDateMs = next(3) == 0 ? nil : Int64(10_000 + 1_000 * next(5))
                    t.cancellationDateMs = next(6) == 0 ? Int64(5_000 + next(3)) : nil
                    t.isUpgraded = next(8) == 0
                    list.append(t)
                    ids.insert(id)
                }
                if ids.count < list.count { repeated += 1 }
                let got = EntitlementEngine.deduplicated(list, nowMs: 0)
                XCTAssertEqual(got, oracle(list), "length \(length), round \(round)")
                XCTAssertEqual(EntitlementEngine.deduplicated(list.reversed(), nowMs: 0), oracle(list.reversed()), "reversed, length \(length), round \(round)")
            }
        }
        XCTAssertGreaterThan(repeated, 500)
    }

    /// Interning answers a String it saw recently by the address of its bytes: the same String
    /// shared, the same text in another String, short texts (kept in the value), more distinct
    /// texts than it remembers, and canonically equal texts (which String equality joins) must
    /// all get the ids a plain dictionary gives.
    func testInterningByAddressAgreesWithADictionary() {
        let long = (0..<7).map { "com.example.product.number.\($0)" }
        var texts: [String] = []
        for round in 0..<40 {
            let k = (round * 5) % long.count
            texts.append(long[k])                                  // the same String again
            texts.append(String(decoding: Array(long[k].utf8), as: UTF8.self))   // its text, new storage
            texts.append("p\(round % 3)")                         // short: no lasting address
        }
        texts += ["caf\u{E9}-long-enough-to-be-on-the-heap", "cafe\u{301}-long-enough-to-be-on-the-heap",
                  "\u{212B}ngstrom-long-enough-to-be-on-the-heap", "\u{C5}ngstrom-long-enough-to-be-on-the-heap"]
        var table = InternTable()
        var plain: [String: Int] = [:]
        for t in texts {
            let expected = plain[t] ?? plain.count
            plain[t] = expected
            XCTAssertEqual(table.id(t), expected, t)
        }
        XCTAssertEqual(table.names.count, plain.count)
    }
}
