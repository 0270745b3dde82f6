// One binary, eight targets, chosen by IAPV_FUZZ_TARGET: receipt, response, entitlements,
// config, options, jws, and the App Store Server API's api and apicall (APIHarness.swift). Any trap is a finding; so is the receipt target's differential oracle:
// whatever the cached path calls valid, OpenSSL's PKCS7_verify path must call valid too; and the
// response target's: the transaction union must equal reading every record; and on every receipt
// input, the in-place base64 decoder must agree with OpenSSL's.
import Glibc
@_spi(Testing) import IAPVerify

enum Harness {
    enum Target: String { case receipt, response, entitlements, config, options, jws, api, apicall }

    static let target: Target = {
        let name = getenv("IAPV_FUZZ_TARGET").map { String(cString: $0) } ?? "receipt"
        guard let t = Target(rawValue: name) else {
            fputs("IAPV_FUZZ_TARGET must be receipt, response, entitlements, config, options, jws, api or apicall\n", stderr)
            exit(2)
        }
        return t
    }()

    static let now: Int64 = 1_893_456_000_000

    static func file(_ path: String) -> String {
        guard let f = fopen(path, "rb") else {
            fputs("fuzz: cannot read \(path) (run from the repository root)\n", stderr)
            exit(2)
        }
        defer { fclose(f) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&chunk, 1, chunk.count, f)
            out += chunk[0..<n]
            if n < chunk.count { break }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func escaped(_ pem: String) -> String {
        pem.replacingAll("\n", with: "\\n")
    }

    /// Apple's roots, the fake test root and Xcode's StoreKit root: every fixture family verifies.
    static let verifier: Verifier = {
        let fixtures = "Tests/IAPVerifyTests/Fixtures"
        let config = """
        {"bundle_id":"*","environments":["Production","Sandbox","Xcode"],
         "trust":{"roots_pem":["\(escaped(file("\(fixtures)/fakepki/root.pem")))"]},
         "xcode":{"accept":true,"roots_pem":["\(escaped(file("\(fixtures)/xcode/StoreKitTestCertificate.pem")))"]},
         "products":{"com.test.app.mercury":{"type":"consumable"},"pro":{"type":"auto_renewable","group":"g","level":1}}}
        """
        do {
            return try Array(config.utf8).withUnsafeBytes { raw throws(IAPVFailure) in try Verifier(json: raw) }
        } catch {
            fputs("fuzz: config rejected: \(error)\n", stderr)
            exit(2)
        }
    }()

    /// The host state every target passes (delivered ids and an order), in each entry point's type.
    static func options<Options: EntryOptions>() -> Options {
        let json = #"{"delivered_transaction_ids":["1"],"orders":[{"order_id":"o","product_id":"p","created_ms":1000}]}"#
        guard let options = try? Array(json.utf8).withUnsafeBytes({ raw throws(IAPVFailure) in try Options(json: raw) }) else {
            fatalError("the harness's own options were refused")
        }
        return options
    }
    static let responseOptions: ResponseOptions = options()
    static let hostState: EntitlementOptions = options()
    static let jwsOptions: JWSOptions = options()

    static func run(_ input: UnsafeRawBufferPointer) {
        switch target {
        case .receipt:
            // Receipts arrive as base64 too: the table decoder must agree with OpenSSL's.
            if !Base64Oracle.agrees(input) { fatalError("the in-place base64 decoder disagrees with OpenSSL's") }
            // The envelope read in place must be what the full tree decoding reads, refusals too.
            if !EnvelopeWalkOracle.agrees(input) { fatalError("the envelope walk disagrees with the tree") }
            // The fast path is a strict profile: it may refuse what PKCS7_verify
            // accepts, never the reverse. So only a fast `valid` is checked against the reference.
            let fast = try? verifier.verifyReceipt(input, nowMs: now)
            if let fast, fast.isValid {
                let reference = try? verifier.verifyReceipt(input, nowMs: now, path: .reference)
                if reference?.isValid != true {
                    fatalError("fast path valid, reference \(reference?.verdict.rawValue ?? "error"): \(reference?.judgement.reason ?? "")")
                }
            }
            _ = fast?.resultJSON()
        case .response:
            // The union reads only the record each id ends with: it must agree with reading them all.
            if !TransactionUnionOracle.agrees(input) { fatalError("the transaction union disagrees with reading every record") }
            _ = (try? verifier.interpretResponse(input, options: responseOptions, nowMs: now))?.resultJSON()
        case .entitlements:
            _ = (try? verifier.computeEntitlements(input, options: hostState, nowMs: now))?.resultJSON()
        case .config:
            _ = try? VerifierConfig(json: input)
        case .options:
            // Every entry point's reading of the same bytes.
            _ = try? ReceiptOptions(json: input)
            _ = try? ResponseOptions(json: input)
            _ = try? EntitlementOptions(json: input)
            _ = try? JWSOptions(json: input)
            _ = try? APIResponseOptions(json: input)
        case .jws:
            _ = (try? verifier.verifyJWS(input, options: jwsOptions, nowMs: now))?.resultJSON()
        case .api:
            APIHarness.runAPI(input)
        case .apicall:
            APIHarness.runCall(input)
        }
    }
}

extension String {
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for c in self { if c == target { out += replacement } else { out.append(c) } }
        return out
    }
}
