// The `iapverify` command: verify or inspect a receipt file and print the result JSON.
// Exit codes: 0 valid, 1 any other verdict, 2 usage, config or input errors. Manual: docs/cli.md.
// One file per command (ReceiptCommand.swift ...); Input.swift reads and tells inputs apart,
// Options.swift holds the options commands share. This file is the root command and the exit codes.

import ArgumentParser
import Glibc
import CIAPVerifyHeader
import IAPVerify

struct IAPVerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "iapverify",
        abstract: "Verify App Store receipts and StoreKit 2 JWS, build and interpret App Store Server API calls, compute entitlements.",
        discussion: """
            Every command but `states` and `fields` reads FILE (or - for standard input) and prints the result JSON; none uses the network.
            Exit codes: 0 valid, 1 any other verdict, 2 usage, config or input errors.
            Manual: docs/cli.md in the iapverify repository.
            """,
        version: IAPV_VERSION_STRING,  // the header's, which c-test holds to VERSION
        subcommands: [ReceiptCommand.self, ResponseCommand.self, EntitlementsCommand.self, JWSCommand.self,
                      APIRequestCommand.self, APIResponseCommand.self, SignCommand.self, OCSPRequestCommand.self,
                      InspectCommand.self, StatesCommand.self, FieldsCommand.self])
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
