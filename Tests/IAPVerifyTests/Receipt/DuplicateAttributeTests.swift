import XCTest
@testable import IAPVerify

/// Each attribute type may appear once in the payload and once in each in-app record, whatever
/// its number: the types Apple uses are tracked by bit (0...63 and 1700...1763) and every other
/// number by a set, so the edges of both windows and numbers outside them are checked here.
final class DuplicateAttributeTests: XCTestCase {
    private func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] { AttributeDER.tlv(tag, content) }
    private func attribute(_ type: Int64, _ value: [UInt8]) -> [UInt8] { AttributeDER.attribute(type, value) }
    private func set(_ members: [[UInt8]]) -> [UInt8] { AttributeDER.set(members) }

    private func decode(_ payload: [UInt8]) -> String? {
        do throws(PayloadProblem) {
            _ = try ReceiptPayloadDecoder.decode(payload[...])
            return nil
        } catch {
            guard case .malformed(let reason) = error else { return "?" }
            return reason
        }
    }

    private let edges: [Int64] = [-1, 0, 1, 2, 62, 63, 64, 65, 1699, 1700, 1701, 1762, 1763, 1764, 99_999, Int64.max]

    func testTopLevelTypes() {
        // Unread values only: a known type's value is checked too, which is not the point here.
        let opaque = tlv(0x0C, Array("x".utf8))
        for type in edges where ![0, 1, 2, 17].contains(type) {
            XCTAssertNil(decode(set([attribute(type, opaque)])), "\(type) once")
            XCTAssertEqual(decode(set([attribute(type, opaque), attribute(type, opaque)])),
                           "attribute \(type) appears more than once")
            // Two different types, each once, from either window or neither.
            for other in edges where other != type && ![0, 1, 2, 17].contains(other) {
                XCTAssertNil(decode(set([attribute(type, opaque), attribute(other, opaque)])), "\(type) and \(other)")
            }
        }
        // Records (17) may repeat; a purchase is one record each.
        XCTAssertNil(decode(set([attribute(17, set([])), attribute(17, set([]))])))
    }

    func testInAppTypes() {
        let opaque = tlv(0x0C, Array("x".utf8))
        for type in edges where !ReceiptPayloadDecoder.readsInApp(type) {
            let once = set([attribute(type, opaque)])
            XCTAssertNil(decode(set([attribute(17, once)])), "\(type) once")
            let twice = set([attribute(type, opaque), attribute(type, opaque)])
            XCTAssertEqual(decode(set([attribute(17, twice)])), "in-app attribute \(type) appears more than once")
            // The same type in two records is fine: each record has its own.
            XCTAssertNil(decode(set([attribute(17, once), attribute(17, once)])), "\(type) in two records")
        }
    }
}
