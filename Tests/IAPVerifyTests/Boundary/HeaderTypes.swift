// The public header's types, for tests that call the C exports (which take them).

import CIAPVerifyHeader

typealias HeaderError = iapv_error
