// swift-tools-version: 6.1
// A purchase service in Swift on Hummingbird 2 that uses the iapverify core directly (the
// IAPVerifyCore product), with no C ABI in between. See README.md.
import PackageDescription

let package = Package(
    name: "iapverify-swift-example",
    platforms: [.macOS(.v14)],
    dependencies: [
        // The checkout this example lives in (outside it: the repository's URL and a version).
        // A path dependency is known by its folder's name, and the checkout may be in a folder of
        // any name: `name:` keeps `package: "iapverify"` below true wherever it is.
        .package(name: "iapverify", path: "../.."),
        // No default traits: the example needs neither swift-configuration nor full Foundation
        // in Hummingbird, and the build is shorter without them.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
    ],
    targets: [
        .executableTarget(
            name: "PurchaseServer",
            dependencies: [
                .product(name: "IAPVerifyCore", package: "iapverify"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
    ]
)
