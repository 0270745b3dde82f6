import ArgumentParser
import IAPVerify

struct ReceiptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receipt", abstract: "Verify an App Store receipt (DER, base64 or PEM) and print the verdict.",
        discussion: "A /verifyReceipt response body is read by `iapverify response`. Manual: docs/cli.md.")

    @Argument(help: "Receipt file (DER, base64 or PEM PKCS7), or - for stdin.")
    var file: String

    @OptionGroup var common: VerifierOptions
    @OptionGroup var call: OptionsFile

    func run() throws {
        try common.verify(try IO.readReceipt(file), checksBundle: true, options: call.options) {
            (verifier, raw, options: ReceiptOptions, now) throws(IAPVFailure) in try verifier.verifyReceipt(raw, options: options, nowMs: now)
        }
    }
}
