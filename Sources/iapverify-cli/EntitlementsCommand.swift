import ArgumentParser
import IAPVerify

struct EntitlementsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "entitlements", abstract: "Compute entitlements from {\"transactions\": [...], \"renewal_info\": [...]}.",
        discussion: "Manual: docs/cli.md.")

    @Argument(help: "Input JSON file, or - for stdin.")
    var file: String

    @OptionGroup var common: VerifierOptions
    @OptionGroup var call: OptionsFile

    func run() throws {
        // Stored transactions: no bundle to check.
        try common.verify(try IO.json(try IO.read(file), from: file), checksBundle: false, options: call.options) {
            (verifier, raw, options: EntitlementOptions, now) throws(IAPVFailure) in try verifier.computeEntitlements(raw, options: options, nowMs: now)
        }
    }
}
