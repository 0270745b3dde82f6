# iapverify: build, test, benchmark and install.
#   make            release libiapverify.so (Swift runtime linked in) and the iapverify CLI
#   make demo       verify a real receipt bundled in the repo and print the purchases
#   make test       every test: Swift tests, ABI/header checks, installed-library C test, CLI
#   make bench      receipts per second against a plain C PKCS7_verify loop
#   make install    PREFIX=/usr/local DESTDIR= : .so + SONAME links, header, iapverify.pc

VERSION     := 0.1.0
SONAME      := libiapverify.so.1
PREFIX      ?= /usr/local
DESTDIR     ?=
LIBDIR      ?= $(PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
PKGCONFIGDIR?= $(LIBDIR)/pkgconfig

SWIFT       ?= swift
RELEASE_DIR := .build-release
OUT         := build
CC          ?= cc
CXX         ?= c++

.PHONY: all bootstrap check-openssl demo test swift-test c-test cli-test bindings-test python-test lua-test go-test \
        nginx-test fuzz fuzz-replay fuzz-minimise sanitize leakcheck soak stress bench install uninstall clean

all: $(OUT)/lib/$(SONAME) $(OUT)/bin/iapverify

SOURCES := $(shell find Sources Include -type f) Package.swift

$(OUT)/.built: $(SOURCES)
	$(SWIFT) build -c release -Xswiftc -static-stdlib --scratch-path $(RELEASE_DIR)
	@mkdir -p $(OUT)/lib $(OUT)/bin
	@touch $@

$(OUT)/lib/$(SONAME): $(OUT)/.built
	cp $(RELEASE_DIR)/release/libiapverify.so $(OUT)/lib/libiapverify.so.$(VERSION)
	strip --strip-unneeded $(OUT)/lib/libiapverify.so.$(VERSION)
	ln -sf libiapverify.so.$(VERSION) $(OUT)/lib/$(SONAME)
	ln -sf $(SONAME) $(OUT)/lib/libiapverify.so

$(OUT)/bin/iapverify: $(OUT)/.built
	cp $(RELEASE_DIR)/release/iapverify-cli $@
	strip $@

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

test: bootstrap check-openssl all swift-test c-test cli-test bindings-test nginx-test fuzz-replay
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

VENV := $(OUT)/venv
PY_NATIVE := bindings/python/src/iapverify/_native

# The Python package, installed with the release library bundled in, plus the example service
# (SQLite and a throwaway PostgreSQL) against a fake Apple.
python-test: all
	@mkdir -p $(PY_NATIVE)
	cp $(OUT)/lib/libiapverify.so.$(VERSION) $(PY_NATIVE)/libiapverify.so.1
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade ./bindings/python pytest "psycopg[binary]"
	cd $(OUT) && ../$(VENV)/bin/python -m pytest -q ../bindings/python/tests ../examples/python/tests

lua-test: all
	luajit bindings/lua/t/test.lua $(CURDIR) $(CURDIR)/$(OUT)/lib/libiapverify.so.1

go-test: all
	Tests/integration/go.sh

nginx-test: all
	Tests/integration/nginx.sh

swift-test:
	$(SWIFT) test --parallel

c-test: all
	Tests/c/run.sh

cli-test: all
	Tests/cli/run.sh

bench: bootstrap all
	Benchmarks/run.sh

install: all
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR)
	install -m 0755 $(OUT)/lib/libiapverify.so.$(VERSION) $(DESTDIR)$(LIBDIR)/
	ln -sf libiapverify.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libiapverify.so
	install -m 0644 Include/iapverify.h $(DESTDIR)$(INCLUDEDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' iapverify.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/iapverify.pc

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libiapverify.so* $(DESTDIR)$(INCLUDEDIR)/iapverify.h $(DESTDIR)$(PKGCONFIGDIR)/iapverify.pc

clean:
	rm -rf $(OUT) $(RELEASE_DIR) .build
