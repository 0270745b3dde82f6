// Test helpers: fixture loading and small wrappers around the verifier.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

enum Fixtures {
    static let root: URL = Bundle.module.resourceURL!.appendingPathComponent("Fixtures")

    static func data(_ path: String) -> [UInt8] {
        let url = root.appendingPathComponent(path)
        guard let d = try? Data(contentsOf: url) else {
            XCTFail("missing fixture \(path)")
            return []
        }
        return [UInt8](d)
    }

    static func text(_ path: String) -> String { String(decoding: data(path), as: UTF8.self) }

    static func list(_ dir: String, suffix: String = ".der") -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(dir).path)) ?? []
        return names.filter { $0.hasSuffix(suffix) }.sorted()
    }

    static func json(_ path: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(data(path)))) as? [String: Any] ?? [:]
    }

    /// The Xcode StoreKit certificate as PEM.
    static var storeKitPEM: String { text("xcode/StoreKitTestCertificate.pem") }
    static var fakeRootPEM: String { text("fakepki/root.pem") }
}

/// Builds a verifier from a config dictionary (serialised to JSON, as a host would).
func makeVerifier(_ config: [String: Any], file: StaticString = #filePath, line: UInt = #line) -> Verifier? {
    do {
        return try makeVerifierOrThrow(config)
    } catch {
        XCTFail("config rejected: \(error)", file: file, line: line)
        return nil
    }
}

func makeVerifierOrThrow(_ config: [String: Any]) throws -> Verifier {
    let json = try JSONSerialization.data(withJSONObject: config)
    return try json.withUnsafeBytes { raw throws(IAPVFailure) in try Verifier(json: raw) }
}

func configError(_ json: String) -> IAPVFailure? {
    let bytes = Array(json.utf8)
    do {
        _ = try bytes.withUnsafeBytes { raw throws(IAPVFailure) in try Verifier(json: raw) }
        return nil
    } catch let e as IAPVFailure {
        return e
    } catch {
        return IAPVFailure(.internal, "\(error)")
    }
}

/// Options as a host writes them, read for the entry point the caller's type names.
func options<Options: EntryOptions>(_ dict: [String: Any], as _: Options.Type = Options.self) throws -> Options {
    let json = dict.isEmpty ? Data() : try JSONSerialization.data(withJSONObject: dict)
    return try json.withUnsafeBytes { raw throws(IAPVFailure) in try Options(json: raw) }
}

extension Verifier {
    func verify(_ bytes: [UInt8], now: Int64, options: ReceiptOptions = ReceiptOptions(), path: CryptoPath = .cached) throws -> ReceiptReport {
        try bytes.withUnsafeBytes { raw throws(IAPVFailure) in try verifyReceipt(raw, options: options, nowMs: now, path: path) }
    }
}

let jan2030: Int64 = 1_893_456_000_000
let day: Int64 = 86_400_000

extension XCTestCase {
    /// A file of the repository, found from this source file's path (Support.swift sits at
    /// Tests/IAPVerifyTests/).
    static func repositoryFile(_ relative: String) -> String {
        let source: String = #filePath  // this file, not the caller's
        var parts = source.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return (parts + [Substring(relative)]).joined(separator: "/")
    }
}
