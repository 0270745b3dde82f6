// The status codes are written once (StatusCode) and must be the header's IAPV_* macros, with
// the names iapv_status_name gives.

import CIAPVerifyHeader
import XCTest
@_spi(Testing) @testable import IAPVerify
import IAPVerifyC

final class StatusCodeTests: XCTestCase {
    func testStatusCodesAreTheHeadersMacros() {
        let header: [Int32] = [Int32(IAPV_OK), Int32(IAPV_E_INVALID_ARGUMENT), Int32(IAPV_E_CONFIG),
                               Int32(IAPV_E_TOO_LARGE), Int32(IAPV_E_NO_MEMORY), Int32(IAPV_E_INTERNAL)]
        XCTAssertEqual(StatusCode.allCases.map(\.rawValue), header)
        for status in StatusCode.allCases {
            XCTAssertEqual(String(cString: IAPVerifyC.iapv_status_name(status.rawValue)), status.name)
        }
        XCTAssertEqual(String(cString: IAPVerifyC.iapv_status_name(42)), "IAPV_E_UNKNOWN")
    }
}
