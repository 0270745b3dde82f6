-- resty.iapverify as a rock. It is pure Lua (LuaJIT FFI) and loads libiapverify.so.1 at run
-- time, so install the library too (make install, or the libiapverify1 Debian package).
-- From a checkout: cd bindings/lua && luarocks make lua-resty-iapverify-0.2.0-1.rockspec
rockspec_format = "3.0"
package = "lua-resty-iapverify"
version = "0.2.0-1"
source = {
   url = "git+https://github.com/iapverify/iapverify.git",
   tag = "v0.2.0",
   dir = "iapverify/bindings/lua",
}
description = {
   summary = "App Store receipt verification, /verifyReceipt interpretation and entitlements for OpenResty and LuaJIT",
   detailed = [[
resty.iapverify binds libiapverify through the LuaJIT FFI: verify App Store receipts and
StoreKit 2 JWS, interpret /verifyReceipt responses and compute entitlements, with the same
answers as the C, Python and Go bindings. Every call returns res, err and never raises.
]],
   license = "Apache-2.0",
   labels = { "openresty", "nginx", "app-store", "in-app-purchase", "receipt" },
}
supported_platforms = { "linux" }
-- LuaJIT (OpenResty's, or Debian's luajit2). cjson (bundled with OpenResty; Debian: lua-cjson)
-- is optional: without it, pass JSON text instead of tables and read res.json.
dependencies = {
   "lua == 5.1",
}
build = {
   type = "builtin",
   modules = {
      ["resty.iapverify"] = "lib/resty/iapverify.lua",
   },
}
