// The `iapverify` command: verify or inspect a receipt file and print the result JSON.
// Exit codes: 0 valid, 1 any other verdict, 2 usage, config or input errors. Manual: docs/cli.md.

import ArgumentParser
import Glibc
import CIAPVerifyHeader
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

/// Options shared by the commands that build a verifier.
struct VerifierOptions: ParsableArguments {
    @Option(name: .long, help: "Verifier config JSON file (docs/cli.md).")
    var config: String?

    @Option(name: .customLong("bundle-id"), help: "Expected bundle id; overrides the config's.")
    var bundleID: String?

    @Option(name: .long, help: "Trusted current time: Unix milliseconds or RFC 3339, e.g. 2030-01-01T00:00:00Z (default: the system clock).")
    var now: String?

    @Flag(name: .long, help: "Indent the result JSON.")
    var pretty = false

    /// The verifier of the config. `checksBundle`: the command verifies purchases against the bundle
    /// id, so a config that accepts any app is said on stderr (entitlements and ocsp-request do not).
    func makeVerifier(checksBundle: Bool) throws -> Verifier {
        do {
            if let config {
                let bytes = try IO.read(config)
                let cfg = try bytes.withUnsafeBytes { raw throws(IAPVFailure) in
                    try VerifierConfig(json: raw, bundleIDOverride: bundleID, bundleIDFallback: "*")
                }
                if cfg.bundleIDFromFallback && checksBundle {
                    IO.warn("no --bundle-id and no bundle_id in \(config): accepting purchases of any app (bundle_id \"*\")")
                }
                return try Verifier(config: cfg)
            }
            // The library's defaults (environments ["Production"]), as with a config of just a bundle id.
            let cfg = VerifierConfig(bundleID: bundleID ?? "*")
            if bundleID == nil && checksBundle {
                IO.warn("no --bundle-id or --config: accepting purchases of any app (bundle_id \"*\")")
            }
            return try Verifier(config: cfg)
        } catch let failure as IAPVFailure {
            throw UsageFailure(description: "\(failure.status.name): \(failure.message)")
        }
    }

    func nowMs() throws -> Int64 { try Self.parseNow(now) }

    static func parseNow(_ now: String?) throws -> Int64 {
        if let now {
            // Ten digits are Unix seconds (2001 to 2286); as milliseconds they would be early 1970.
            if now.utf8.count == 10, now.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let seconds = Int64(now) {
                throw UsageFailure(description: "--now \(now) looks like Unix seconds (\(Timestamp.format(seconds * 1000))): "
                    + "pass milliseconds (--now \(now)000) or RFC 3339 (--now \(Timestamp.format(seconds * 1000)))")
            }
            guard let ms = Timestamp.parse(now) else {
                throw UsageFailure(description: "--now \(now) is neither Unix milliseconds nor an RFC 3339 date (e.g. 2030-01-01T00:00:00Z)")
            }
            return ms
        }
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    /// The per-call options in the file `options` (none: the defaults).
    func callOptions<Options: EntryOptions>(_ options: String?, for verifier: Verifier) throws -> Options {
        let bytes = try options.map { try IO.read($0) } ?? []
        do {
            return try bytes.withUnsafeBytes { raw throws(IAPVFailure) in try verifier.options(json: raw) }
        } catch let error as IAPVFailure {
            throw UsageFailure(description: "\(error.status.name): \(error.message)")
        }
    }
}

/// `--options`, for the commands where it may be left out.
struct OptionsFile: ParsableArguments {
    @Option(name: .long, help: "Per-call options JSON file (docs/cli.md).")
    var options: String?
}

struct ReceiptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receipt", abstract: "Verify an App Store receipt (DER, base64 or PEM) and print the verdict.",
        discussion: "A /verifyReceipt response body is read by `iapverify response`. Manual: docs/cli.md.")

    @Argument(help: "Receipt file (DER, base64 or PEM PKCS7), or - for stdin.")
    var file: String

    @OptionGroup var common: VerifierOptions
    @OptionGroup var call: OptionsFile

    func run() throws {
        let input = try IO.readReceipt(file)
        let now = try common.nowMs()
        let verifier = try common.makeVerifier(checksBundle: true)
        let options: ReceiptOptions = try common.callOptions(call.options, for: verifier)
        try common.answer(input) { raw throws(IAPVFailure) in
            try verifier.verifyReceipt(raw, options: options, nowMs: now)
        }
    }
}

extension VerifierOptions {
    /// Runs one core call on `input` and prints its result (docs/cli.md): exit 0 for `valid`, 1 for
    /// any other verdict, 2 when the call returns a status instead of a result.
    func answer<R: VerificationResult>(_ input: [UInt8], _ call: (UnsafeRawBufferPointer) throws(IAPVFailure) -> R) throws {
        let result: R
        do {
            result = try input.withUnsafeBytes { raw throws(IAPVFailure) in try call(raw) }
        } catch let failure as IAPVFailure {
            throw UsageFailure(description: "\(failure.status.name): \(failure.message)")
        }
        IO.printJSON(result.renderJSON(), pretty: pretty)
        if !result.isValid { throw ExitCode(1) }
    }
}

struct ResponseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "response", abstract: "Interpret a /verifyReceipt JSON body: status, next action, entitlements.",
        discussion: "Manual: docs/cli.md.")

    @Argument(help: "Response body file, or - for stdin.")
    var file: String

    @Option(name: .long, help: "Which /verifyReceipt host answered: Production or Sandbox.")
    var environment: String?

    @Option(name: .long, help: ArgumentHelp("Deprecated: the old name of --environment.", visibility: .hidden))
    var endpoint: String?

    @Option(name: .long, help: "Which attempt this was (1-based), for the retry back-off.")
    var attempt: Int64?

    @OptionGroup var common: VerifierOptions
    @OptionGroup var call: OptionsFile

    func run() throws {
        let input = try IO.json(try IO.read(file), from: file)
        let now = try common.nowMs()
        let verifier = try common.makeVerifier(checksBundle: true)
        var options: ResponseOptions = try common.callOptions(call.options, for: verifier)
        if let endpoint {
            IO.warn("--endpoint is deprecated: use --environment \(endpoint.prefix(1).uppercased() + endpoint.dropFirst().lowercased()); --endpoint goes in the next release")
        }
        if let name = environment ?? endpoint {
            guard let known = ServerEnvironment(anyCase: name), known != .localTesting else {
                throw UsageFailure(description: "--environment must be Production or Sandbox, got \(name)")
            }
            options.environment = known
        }
        if let attempt {
            guard attempt >= 1 else { throw UsageFailure(description: "--attempt must be >= 1") }
            options.attempt = attempt
        }
        try common.answer(input) { raw throws(IAPVFailure) in
            try verifier.interpretResponse(raw, options: options, nowMs: now)
        }
    }
}

struct EntitlementsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "entitlements", abstract: "Compute entitlements from {\"transactions\": [...], \"renewal_info\": [...]}.",
        discussion: "Manual: docs/cli.md.")

    @Argument(help: "Input JSON file, or - for stdin.")
    var file: String

    @OptionGroup var common: VerifierOptions
    @OptionGroup var call: OptionsFile

    func run() throws {
        let input = try IO.json(try IO.read(file), from: file)
        let now = try common.nowMs()
        let verifier = try common.makeVerifier(checksBundle: false)   // stored transactions: no bundle to check
        let options: HostState = try common.callOptions(call.options, for: verifier)
        try common.answer(input) { raw throws(IAPVFailure) in
            try verifier.computeEntitlements(raw, options: options, nowMs: now)
        }
    }
}

struct JWSCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jws", abstract: "Verify a StoreKit 2 signed transaction, renewal info or notification (compact JWS).",
        discussion: "Manual: docs/cli.md.")

    @Argument(help: "JWS file, or - for stdin.")
    var file: String

    @OptionGroup var common: VerifierOptions
    @OptionGroup var call: OptionsFile

    func run() throws {
        let input = try IO.jws(try IO.read(file), from: file)
        let now = try common.nowMs()
        let verifier = try common.makeVerifier(checksBundle: true)
        let options: JWSOptions = try common.callOptions(call.options, for: verifier)
        try common.answer(input) { raw throws(IAPVFailure) in
            try verifier.verifyJWS(raw, options: options, nowMs: now)
        }
    }
}

/// The options of the commands that sign with the developer's key.
struct SignerOptions: ParsableArguments {
    @Option(name: .long, help: "Signer JSON file: private_key_pem, key_id, issuer_id, bundle_id.")
    var signer: String

    @Option(name: .long, help: "Signing time: Unix milliseconds or RFC 3339 (default: the system clock).")
    var now: String?

    @Flag(name: .long, help: "Indent the result JSON.")
    var pretty = false

    /// Reads FILE, builds the signer, runs `make` on the file's bytes and prints its result.
    func run(_ file: String, _ make: (Signer, UnsafeRawBufferPointer, Int64) throws(IAPVFailure) -> [UInt8]) throws {
        let input = try IO.json(try IO.read(file), from: file)
        let config = try IO.read(signer)
        let nowMs = try VerifierOptions.parseNow(now)
        do {
            let s = try config.withUnsafeBytes { raw throws(IAPVFailure) in try Signer(json: raw) }
            let json = try input.withUnsafeBytes { raw throws(IAPVFailure) in try make(s, raw, nowMs) }
            IO.printJSON(json, pretty: pretty)
        } catch let failure as IAPVFailure {
            throw UsageFailure(description: "\(failure.status.name): \(failure.message)")
        }
    }
}

struct APIRequestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api-request", abstract: "Build the exact HTTP request for an App Store Server API call (no network).",
        discussion: "CALL.json names the endpoint and its parameters; the output is method, url, headers and body to send as is. Manual: docs/server-api.md.")

    @Argument(help: "Call JSON file, e.g. {\"endpoint\": \"transaction_history\", \"transaction_id\": \"...\"}, or - for stdin.")
    var file: String

    @OptionGroup var signing: SignerOptions

    func run() throws {
        try signing.run(file) { (s, raw, nowMs) throws(IAPVFailure) in try s.apiRequest(raw, nowMs: nowMs).resultJSON() }
    }
}

struct SignCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign", abstract: "Sign a promotional offer (V1 or V2), an introductory offer eligibility or an Advanced Commerce request.",
        discussion: "REQUEST.json: {\"kind\": ..., \"nonce\": \"<UUID>\", ...}. Manual: docs/offer-signatures.md.")

    @Argument(help: "Signature request JSON file, or - for stdin.")
    var file: String

    @OptionGroup var signing: SignerOptions

    func run() throws {
        try signing.run(file) { (s, raw, nowMs) throws(IAPVFailure) in try s.sign(raw, nowMs: nowMs).resultJSON() }
    }
}

struct APIResponseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api-response", abstract: "Interpret an App Store Server API answer: next action, verified transactions, entitlements.",
        discussion: "--options must say which call answered: {\"endpoint\": ..., \"environment\": ..., \"http_status\": ...}. Manual: docs/server-api.md.")

    @Argument(help: "Answer body file (may be empty), or - for stdin.")
    var file: String

    @OptionGroup var common: VerifierOptions

    @Option(name: .long, help: "Required: which call answered, as a JSON file with at least {\"endpoint\": ..., \"http_status\": ...} (docs/server-api.md).")
    var options: String

    func run() throws {
        let input = try IO.json(try IO.read(file), from: file)
        let now = try common.nowMs()
        let verifier = try common.makeVerifier(checksBundle: true)
        let options: APIResponseOptions = try common.callOptions(self.options, for: verifier)
        try common.answer(input) { raw throws(IAPVFailure) in
            try verifier.interpretAPIResponse(raw, options: options, nowMs: now)
        }
    }
}

struct OCSPRequestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ocsp-request", abstract: "Print the OCSP request and responder URL for the signing certificate of a JWS or receipt.",
        discussion: "POST the DER (base64-decode \"request\") to \"responder_url\" with Content-Type application/ocsp-request, then pass the answer, base64, in --options {\"ocsp_responses\": [...]}. Manual: docs/revocation.md.")

    @Argument(help: "A compact JWS or a receipt (DER, base64 or PEM), or - for stdin.")
    var file: String

    @OptionGroup var common: VerifierOptions
    @OptionGroup var call: OptionsFile

    func run() throws {
        let read = try IO.read(file)
        // A JWS is verified as `jws` would, anything else as `receipt` would (Input.kind).
        let isJWS = Input.kind(of: read).kind == .jws
        let input = try isJWS ? IO.jws(read, from: file) : IO.receipt(read, from: file)
        let now = try common.nowMs()
        // The request is for the signing certificate, whatever the bundle: nothing to say about it.
        let verifier = try common.makeVerifier(checksBundle: false)
        let revocation: RevocationReport?
        let verdict: Verdict
        let reason: String
        do {
            if isJWS {
                let options: JWSOptions = try common.callOptions(call.options, for: verifier)
                let r = try input.withUnsafeBytes { raw throws(IAPVFailure) in try verifier.verifyJWS(raw, options: options, nowMs: now) }
                (revocation, verdict, reason) = (r.revocation, r.verdict, r.judgement.reason)
            } else {
                let options: ReceiptOptions = try common.callOptions(call.options, for: verifier)
                let r = try input.withUnsafeBytes { raw throws(IAPVFailure) in try verifier.verifyReceipt(raw, options: options, nowMs: now) }
                (revocation, verdict, reason) = (r.revocation, r.verdict, r.judgement.reason)
            }
        } catch let failure as IAPVFailure {
            throw UsageFailure(description: "\(failure.status.name): \(failure.message)")
        }
        guard let revocation, let request = revocation.request else {
            throw UsageFailure(description: "no OCSP request: the chain was not verified (\(verdict.rawValue): \(reason))")
        }
        var w = "{\"responder_url\":"
        w += revocation.responderURL.map { "\"\($0)\"" } ?? "null"
        w += ",\"request\":\"\(request)\",\"status\":\"\(revocation.status.name)\",\"verdict\":\"\(verdict.rawValue)\"}"
        IO.printJSON(Array(w.utf8), pretty: common.pretty)
    }
}

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect", abstract: "Decode a receipt without verifying it (marked \"trusted\": false).",
        discussion: "Manual: docs/cli.md.")

    @Argument(help: "Receipt file (DER, base64 or PEM PKCS7; or an iOS 6 transaction receipt), or - for stdin.")
    var file: String

    @Flag(name: .long, help: "Indent the result JSON.")
    var pretty = false

    func run() throws {
        // An iOS 6 style transaction receipt (a base64 property list) is read, not inspected.
        let raw = try IO.read(file)
        if raw.withUnsafeBytes({ TransactionReceiptReader.looksLikeOne($0) }) {
            let report = raw.withUnsafeBytes { TransactionReceiptReader.read($0) }
            IO.printJSON(report.resultJSON(), pretty: pretty)
            if !report.isRead { throw ExitCode(1) }
            return
        }
        let input = try IO.receipt(raw, from: file)
        let (json, decoded) = input.withUnsafeBytes { ReceiptInspector.inspect($0) }
        IO.printJSON(json, pretty: pretty)
        if !decoded { throw ExitCode(1) }
    }
}

struct StatesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "states", abstract: "Print the subscription states and the notifications that move between them.",
        discussion: "The engine's own table, as Graphviz DOT (scripts/state-diagram draws it into docs/subscription-states.svg) or JSON. Manual: docs/cli.md.")

    enum Format: String, ExpressibleByArgument, CaseIterable { case dot, json }

    @Option(name: .long, help: "dot (Graphviz) or json.")
    var format: Format = .dot

    @Flag(name: .long, help: "Indent the JSON.")
    var pretty = false

    func run() throws {
        switch format {
        case .dot:
            fputs(StateDiagram.dot(), stdout)
            fflush(stdout)
        case .json:
            IO.printJSON(Array(StateDiagram.json().utf8), pretty: pretty)
        }
    }
}

/// SubscriptionStates as text. Everything comes out in the table's order, so the same table
/// always gives the same bytes (the committed SVG is checked against them).
enum StateDiagram {
    static func dot() -> String {
        var out = "// Generated by `iapverify states` from SubscriptionStates (Sources/IAPVerify/StoreKit2); do not edit.\n"
        out += "digraph subscription_states {\n"
        out += "  graph [rankdir=LR, nodesep=0.5, ranksep=0.9, fontname=\"Helvetica\", fontsize=13, labelloc=t,\n"
        out += "         label=\"Auto-renewable subscription states (green: active, access granted)\\nArrows: notification effects; the state itself comes from the signed records\\n\\n\"];\n"
        out += "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=12, penwidth=1.2, margin=\"0.2,0.08\"];\n"
        out += "  edge [fontname=\"Helvetica\", fontsize=9, color=\"#555555\", fontcolor=\"#333333\"];\n"
        out += "  start [shape=point, width=0.12, label=\"\"];\n"
        for row in SubscriptionStates.states {
            let (fill, line) = row.active ? ("#d7f0dc", "#2e7d32") : ("#eeeeee", "#757575")
            let access = row.active ? "access" : "no access"
            out += "  \(row.state.rawValue) [label=\"\(row.state.rawValue)\\n(\(access))\", fillcolor=\"\(fill)\", color=\"\(line)\"];\n"
        }
        out += "  start -> \(SubscriptionStates.start.rawValue);\n"
        // One arrow per (from, to), labelled with every effect that takes it.
        var pairs: [String] = []
        var labels: [String: [String]] = [:]
        for t in SubscriptionStates.transitions {
            let item = t.effect.rawValue + (t.when.map { " (\($0))" } ?? "")
            for from in t.from {
                let pair = "\(from.rawValue) -> \(t.to.rawValue)"
                if labels[pair] == nil { pairs.append(pair) }
                labels[pair, default: []].append(item)
            }
        }
        for pair in pairs {
            let text = lines(labels[pair] ?? []).map(escaped).joined(separator: "\\n")
            let ends = pair.split(separator: " ")
            if ends.first == ends.last, let state = ends.first {
                // What leaves a state as it is goes in a note beside it: a long self-loop label
                // would sit on top of the other arrows.
                out += "  \(state)_stays [shape=note, style=filled, fillcolor=\"#fffbe6\", color=\"#b0a060\", fontsize=9, margin=\"0.3,0.1\", "
                    + "label=\"stays \(state):\\n\(text)\"];\n"
                out += "  \(state) -> \(state)_stays [style=dashed, arrowhead=none];\n"
            } else {
                out += "  \(pair) [label=\"\(text)\"];\n"
            }
        }
        out += "}\n"
        return out
    }

    /// Packs label items into lines of about 44 characters, so a busy arrow stays readable.
    static func lines(_ items: [String]) -> [String] {
        var out: [String] = []
        for item in items {
            if let last = out.last, last.count + 2 + item.count <= 44 {
                out[out.count - 1] = last + ", " + item
            } else {
                out.append(item)
            }
        }
        return out
    }

    static func json() -> String {
        let states = SubscriptionStates.states.map {
            "{\"state\":\"\($0.state.rawValue)\",\"active\":\($0.active),\"meaning\":\"\(escaped($0.meaning))\"}"
        }
        let transitions = SubscriptionStates.transitions.map { t in
            "{\"from\":[" + t.from.map { "\"\($0.rawValue)\"" }.joined(separator: ",") + "],\"effect\":\"\(t.effect.rawValue)\","
                + "\"to\":\"\(t.to.rawValue)\",\"when\":" + (t.when.map { "\"\(escaped($0))\"" } ?? "null") + "}"
        }
        let notDrawn = SubscriptionStates.notDrawn.map { "{\"effect\":\"\($0.effect.rawValue)\",\"why\":\"\(escaped($0.why))\"}" }
        return "{\"start\":\"\(SubscriptionStates.start.rawValue)\",\"states\":[\(states.joined(separator: ","))],"
            + "\"transitions\":[\(transitions.joined(separator: ","))],\"not_drawn\":[\(notDrawn.joined(separator: ","))]}"
    }

    /// The table's texts are plain ASCII; quotes and backslashes are escaped all the same.
    static func escaped(_ s: String) -> String {
        var out = ""
        for c in s {
            if c == "\\" || c == "\"" { out.append("\\") }
            out.append(c)
        }
        return out
    }
}

struct IAPVerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "iapverify",
        abstract: "Verify App Store receipts and StoreKit 2 JWS, build and interpret App Store Server API calls, compute entitlements.",
        discussion: """
            Every command but `states` reads FILE (or - for standard input) and prints the result JSON; none uses the network.
            Exit codes: 0 valid, 1 any other verdict, 2 usage, config or input errors.
            Manual: docs/cli.md in the iapverify repository.
            """,
        version: IAPV_VERSION_STRING,  // the header's, which c-test holds to VERSION
        subcommands: [ReceiptCommand.self, ResponseCommand.self, EntitlementsCommand.self, JWSCommand.self,
                      APIRequestCommand.self, APIResponseCommand.self, SignCommand.self, OCSPRequestCommand.self,
                      InspectCommand.self, StatesCommand.self])
}

/// Runs the command with the exit codes of docs/cli.md (ArgumentParser's own usage code 64 becomes 2).
func runMain() -> Int32 {
    do {
        // A bare `iapverify` is a usage error: the usage goes to stderr and the exit code is 2.
        if CommandLine.arguments.count <= 1 {
            fputs(IAPVerifyCommand.helpMessage() + "\n", stderr)
            return 2
        }
        var command = try IAPVerifyCommand.parseAsRoot()
        try command.run()
        return 0
    } catch let exit as ExitCode {
        return exit.rawValue
    } catch let usage as UsageFailure {
        IO.warn(usage.description)
        return 2
    } catch {
        let code = IAPVerifyCommand.exitCode(for: error)
        let message = IAPVerifyCommand.fullMessage(for: error)
        if code == .success {
            print(message)
            return 0
        }
        fputs(message + "\n", stderr)
        return 2
    }
}

exit(runMain())
