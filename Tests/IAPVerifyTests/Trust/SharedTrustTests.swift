// The built-in roots parsed once per process and the process-wide chain cache: verifiers with the
// same anchors share what was verified, verifiers with other anchors never do, and a shared
// entry never changes a verdict.

import Dispatch
import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class SharedTrustTests: XCTestCase {
    let appleOnly: [String: Any] = ["bundle_id": "*", "environments": ["Sandbox"]]
    let jws = Fixtures.text("jws/transaction_autorenew_sandbox_2022-11.jws").trimmingCharacters(in: .whitespacesAndNewlines)

    /// The fake Apple-shaped PKI's config (FakePKITests.config): its root only.
    func fakeConfig(appleRoots: Bool = false) -> [String: Any] {
        ["bundle_id": "com.example.fake", "trust": ["roots_pem": [Fixtures.fakeRootPEM], "include_apple_roots": appleRoots]]
    }

    func chain(of v: Verifier) throws -> VerifiedChain {
        let chains = v.context.cache.chains
        XCTAssertEqual(chains.count, 1)
        return try XCTUnwrap(chains.first)
    }

    func testVerifiersWithTheBuiltInRootsShareOneParsedAnchorSet() throws {
        let a = try makeVerifierOrThrow(appleOnly)
        let b = try makeVerifierOrThrow(appleOnly)
        XCTAssertTrue(a.context.anchors === b.context.anchors)
        XCTAssertEqual(a.context.anchors.roots.count, 3)
        // Custom roots get their own store, holding the same decoded Apple certificates.
        let mixed = try makeVerifierOrThrow(fakeConfig(appleRoots: true))
        XCTAssertFalse(mixed.context.anchors === a.context.anchors)
        XCTAssertEqual(mixed.context.anchors.roots.count, 4)
        for i in 0..<3 { XCTAssertTrue(mixed.context.anchors.roots[i] === a.context.anchors.roots[i]) }
        XCTAssertNotEqual(mixed.context.anchors.identity, a.context.anchors.identity)
        // The same roots built twice name the same anchor set.
        let again = try makeVerifierOrThrow(fakeConfig(appleRoots: true))
        XCTAssertEqual(again.context.anchors.identity, mixed.context.anchors.identity)
    }

    func testAConfigsOwnRootsAreCheckedOnceAndShared() throws {
        let a = try makeVerifierOrThrow(fakeConfig())
        let b = try makeVerifierOrThrow(fakeConfig())
        XCTAssertTrue(a.context.anchors === b.context.anchors)
        let withApple = try makeVerifierOrThrow(fakeConfig(appleRoots: true))
        XCTAssertFalse(withApple.context.anchors === a.context.anchors)
        let xcode: [String: Any] = ["bundle_id": "*", "xcode": ["accept": true, "roots_pem": [Fixtures.storeKitPEM]]]
        let x1 = try makeVerifierOrThrow(xcode), x2 = try makeVerifierOrThrow(xcode)
        XCTAssertTrue(try XCTUnwrap(x1.context.xcodeAnchors) === XCTUnwrap(x2.context.xcodeAnchors))
        XCTAssertTrue(x1.context.anchors === x2.context.anchors)
        XCTAssertLessThanOrEqual(ConfigAnchors.count, ConfigAnchors.capacity)
    }

    func testACustomRootStillHasToBeASelfSignedCA() {
        let intermediate = Fixtures.text("certs/AppleWWDRCAG6.pem")
        for apple in [true, false] {
            let json = #"{"bundle_id":"a","trust":{"include_apple_roots":\#(apple),"roots_pem":["\#(intermediate.replacingOccurrences(of: "\n", with: "\\n"))"]}}"#
            let failure = configError(json)
            XCTAssertEqual(failure?.status, .config)
            XCTAssertTrue(failure?.message.contains("roots[\(apple ? 3 : 0)]") == true, failure?.message ?? "no error")
            XCTAssertTrue(failure?.message.contains("not a self-signed CA") == true, failure?.message ?? "no error")
            // A refused set is not remembered: refused again, the same way.
            XCTAssertEqual(configError(json)?.message, failure?.message)
        }
    }

    func testANewVerifierWithTheSameAnchorsReusesAVerifiedChain() throws {
        let first = try makeVerifierOrThrow(appleOnly)
        XCTAssertEqual(try verifyJWS(first, jws, now: jan2030).verdict, .valid)
        let second = try makeVerifierOrThrow(appleOnly)
        XCTAssertEqual(second.cachedChainCount, 0)
        XCTAssertEqual(try verifyJWS(second, jws, now: jan2030).verdict, .valid)
        // The very object the first verifier validated, not a second validation.
        XCTAssertTrue(try chain(of: second) === chain(of: first))
    }

    func testAChainVerifiedByOneVerifierIsNotTrustedByAnotherWithDifferentAnchors() throws {
        let apple = try makeVerifierOrThrow(appleOnly)
        XCTAssertEqual(try verifyJWS(apple, jws, now: jan2030).verdict, .valid)
        // Only the fake root: Apple's chain is refused, though the process has it verified.
        let fake = try makeVerifierOrThrow(["bundle_id": "*", "environments": ["Sandbox"],
                                            "trust": ["roots_pem": [Fixtures.fakeRootPEM], "include_apple_roots": false]])
        let refused = try verifyJWS(fake, jws, now: jan2030)
        XCTAssertEqual(refused.verdict, .untrustedChain, refused.judgement.reason)
        XCTAssertEqual(fake.cachedChainCount, 0)
        // Other anchors that do hold the root validate the chain themselves.
        let g3 = try makeVerifierOrThrow(["bundle_id": "*", "environments": ["Sandbox"],
                                          "trust": ["roots_pem": [Fixtures.text("certs/AppleRootCA-G3.pem")], "include_apple_roots": false]])
        XCTAssertEqual(try verifyJWS(g3, jws, now: jan2030).verdict, .valid)
        XCTAssertFalse(try chain(of: g3) === chain(of: apple))

        // And the other way: the fake PKI's receipt, verified under its root, is not Apple's.
        let bytes = Fixtures.data("fakepki/cache_same_chain_in_validity.der")
        let fakeReceipts = try makeVerifierOrThrow(fakeConfig())
        XCTAssertEqual(try fakeReceipts.verify(bytes, now: 1_705_399_200_000).verdict, .valid)
        let appleReceipts = try makeVerifierOrThrow(["bundle_id": "com.example.fake"])
        let r = try appleReceipts.verify(bytes, now: 1_705_399_200_000)
        XCTAssertEqual(r.verdict, .untrustedChain, r.judgement.reason)
    }

    func testASharedChainIsStillCheckedAtEachValidationInstant() throws {
        let first = try makeVerifierOrThrow(fakeConfig())
        XCTAssertEqual(try first.verify(Fixtures.data("fakepki/cache_same_chain_in_validity.der"), now: 1_705_399_200_000).verdict, .valid)
        // A fresh verifier finds the same certificates in the shared cache, but this receipt was
        // created after the leaf expired: refused, as a cold validation refuses it.
        let later = try makeVerifierOrThrow(fakeConfig())
        let r = try later.verify(Fixtures.data("fakepki/cache_same_chain_after_expiry.der"), now: 1_719_878_400_000)
        XCTAssertEqual(r.verdict, .untrustedChain)
        XCTAssertTrue(r.judgement.reason.contains("is not valid at the receipt creation date"), r.judgement.reason)
        let cold = try makeVerifierOrThrow(fakeConfig(appleRoots: true))
        XCTAssertEqual(try cold.verify(Fixtures.data("fakepki/cache_same_chain_after_expiry.der"), now: 1_719_878_400_000).verdict, .untrustedChain)
    }

    func testTheSharedKeyNamesTheAnchorSet() throws {
        let apple = try makeVerifierOrThrow(appleOnly).context.anchors
        let fake = try makeVerifierOrThrow(fakeConfig()).context.anchors
        let fakeAgain = try makeVerifierOrThrow(fakeConfig()).context.anchors
        let key = ChainKey(.jws, signer: [], certificates: Array(jws.utf8)[...])
        // Compared with ==, not XCTAssertEqual: a failure would print kilobytes of key.
        XCTAssertFalse(ChainKey(key, anchors: apple) == ChainKey(key, anchors: fake))
        XCTAssertTrue(ChainKey(key, anchors: fake) == ChainKey(key, anchors: fakeAgain))
        XCTAssertFalse(ChainKey(key, anchors: fake) == key)
        XCTAssertLessThanOrEqual(ChainCache.shared.count, ChainCache.sharedCapacity)
    }

    func testVerifiersBuiltAndUsedOnManyThreadsAgree() {
        let verdicts = UnsafeMutableBufferPointer<Bool>.allocate(capacity: 32)
        defer { verdicts.deallocate() }
        let text = jws, config = appleOnly
        DispatchQueue.concurrentPerform(iterations: 32) { i in
            let v = try? makeVerifierOrThrow(config)
            verdicts[i] = v.flatMap { try? verifyJWS($0, text, now: jan2030).verdict } == .valid
        }
        XCTAssertEqual(verdicts.filter { $0 }.count, 32)
    }
}
