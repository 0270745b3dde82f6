import ArgumentParser
import IAPVerify

struct JWSCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jws", abstract: "Verify a StoreKit 2 signed transaction, renewal info or notification (compact JWS).",
        discussion: "Manual: docs/cli.md.")

    @Argument(help: "JWS file, or - for stdin.")
    var file: String

    @OptionGroup var common: VerifierOptions
    @OptionGroup var call: OptionsFile

    func run() throws {
        try common.verify(try IO.jws(try IO.read(file), from: file), checksBundle: true, options: call.options) {
            (verifier, raw, options: JWSOptions, now) throws(IAPVFailure) in try verifier.verifyJWS(raw, options: options, nowMs: now)
        }
    }
}
