// The options several commands share: the verifier's (config, bundle id, clock, --pretty), the
// per-call options file, and the signer's; and how a core call's result is printed.

import ArgumentParser
import Glibc
import IAPVerify

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

extension VerifierOptions {
    /// A verifying command after its input is read, in the order that decides which error is told
    /// first: the clock, the verifier, the per-call options (then `adjust`, for flags that set
    /// options), the call. Its result is printed (docs/cli.md): exit 0 for `valid`, 1 for any other
    /// verdict, 2 when the call returns a status instead of a result.
    func verify<Options: EntryOptions, R: VerificationResult>(
        _ input: [UInt8], checksBundle: Bool, options file: String?, adjust: (inout Options) throws -> Void = { _ in },
        _ call: (Verifier, UnsafeRawBufferPointer, Options, Int64) throws(IAPVFailure) -> R
    ) throws {
        let now = try nowMs()
        let verifier = try makeVerifier(checksBundle: checksBundle)
        var options: Options = try callOptions(file, for: verifier)
        try adjust(&options)
        let result: R
        do {
            result = try input.withUnsafeBytes { raw throws(IAPVFailure) in try call(verifier, raw, options, now) }
        } catch let failure as IAPVFailure {
            throw UsageFailure(description: "\(failure.status.name): \(failure.message)")
        }
        IO.printJSON(result.resultJSON(), pretty: pretty)
        if !result.isValid { throw ExitCode(1) }
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
