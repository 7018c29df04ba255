# agentiso build and test entry points. `make test` is what CI runs.
GO ?= go
BIN := bin/agentiso
DEV_BIN := bin/agentiso-dev
PKGS := ./...
FUZZTIME ?= 3s
# Bound the minimisation of new inputs: by default it may run 60s past
# -fuzztime, and a short run then fails spuriously with the fuzzer killed
# mid-minimisation (seen with FuzzParseStream and FuzzLocateFile).
FUZZMINIMIZETIME ?= 5s

.PHONY: build build-dev test testapiserver testapiserver-ci unit lint staticcheck fmt-check vet cross fuzz demo bench clean e2e e2e-deps e2e-fixture e2e-arch e2e-live e2e-live-matrix e2e-upstream e2e-hub upstream-build

build:
	$(GO) build -o $(BIN) ./cmd/agentiso

## build-dev: the developer aids (bin/agentiso-dev: fixture ISOs, the rendezvous
## simulator, the demo's cluster and a BMC emulator), apart from the shipped
## agentiso, which links no fake (cmd/agentiso's TestShippedBinaryLinksNoFake)
build-dev:
	$(GO) build -o $(DEV_BIN) ./cmd/agentiso-dev

## test: everything CI checks: format, vet, staticcheck, unit + script tests (in CI
## with the real kube-apiserver + etcd of hack/build-testapiserver.sh), fuzz seed
## corpora, the upstream oracle in CI (or with AGENTISO_UPSTREAM=1), the QEMU
## boot test when qemu-system-x86_64 is installed, and the live lab when QEMU
## is installed and make runs as root (all three always in CI, where .ci/run
## installs QEMU).
test: lint cross testapiserver-ci unit
	@if [ -n "$$CI" ] || [ -n "$$AGENTISO_UPSTREAM" ]; then \
		$(MAKE) e2e-upstream; \
	else \
		echo "make test: skipping the upstream oracle (builds the real assisted-service once, ~5-15 min; make e2e-upstream)"; \
	fi
	@if command -v qemu-system-x86_64 >/dev/null 2>&1 || [ -n "$$CI" ]; then \
		$(MAKE) e2e; \
	else \
		echo "make test: qemu-system-x86_64 not installed; skipping the boot test (make e2e installs it)"; \
	fi
	@if [ -n "$$CI" ] || { command -v qemu-system-x86_64 >/dev/null 2>&1 && [ "$$(id -u)" -eq 0 ]; }; then \
		$(MAKE) e2e-live; \
	else \
		echo "make test: skipping the live lab (needs qemu-system-x86_64 and root; make e2e-live)"; \
	fi
	@if [ -n "$$CI" ] || [ -n "$$AGENTISO_UPSTREAM" ]; then $(MAKE) e2e-hub HUB_BRANCH=release-4.20; else echo "make test: skipping the hub hand-over (make e2e-hub)"; fi

## testapiserver: build (or find in ~/.cache/agentiso/testapiserver) the real
## kube-apiserver and etcd, and the CRDs, that node-image's tests run against
## (internal/testapiserver; they skip without it, and fail in CI).
testapiserver:
	bash hack/build-testapiserver.sh

testapiserver-ci:
	@if [ -n "$$CI" ] || [ "$$AGENTISO_TESTAPISERVER" = 1 ]; then \
		bash hack/build-testapiserver.sh; \
	else \
		echo "make test: using the test API server only if built (make testapiserver; ~10 min cold, then cached)"; \
	fi

# The binary must keep building for the admins' laptops, not just Linux.
# One build per operating system: no file of the module is specific to a CPU
# architecture (checked here), so darwin/amd64 builds when darwin/arm64 does.
# pkg/serve's tests are vetted for Windows too (a socket is a Handle there:
# sockopt_windows_test.go); the other packages' tests are Linux's.
cross:
	@f=$$(git ls-files '*.go' | grep -E '_(386|amd64|arm|arm64|loong64|mips[a-z0-9]*|ppc64|ppc64le|riscv64|s390x|wasm)(_test)?\.go$$'; \
		git grep -l -E '^//go:build.*\b(386|amd64|arm|arm64|ppc64le|s390x|riscv64)\b' -- '*.go' 2>/dev/null); \
	if [ -n "$$f" ]; then echo "cross: CPU-specific files (build every GOARCH in cross then): $$f"; exit 1; fi
	GOOS=darwin GOARCH=arm64 $(GO) build -o /dev/null ./cmd/agentiso
	GOOS=windows GOARCH=amd64 $(GO) build -o /dev/null ./cmd/agentiso
	GOOS=windows GOARCH=amd64 $(GO) vet ./pkg/serve/

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

# Unit tests, testscript CLI tests and every fuzz test's seed corpus
# (go test runs Fuzz* seeds as ordinary tests).
unit:
	$(GO) test -count=1 -timeout 30m $(PKGS)

## fuzz: run every fuzz test for FUZZTIME each (make test already runs their seeds)
fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "== $$pkg $$f"; \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) $$pkg || exit 1; \
		done; \
	done

## lint: gofmt, go vet and staticcheck (pinned; fetched through the Go module proxy)
STATICCHECK_VERSION ?= v0.8.2
lint: fmt-check vet staticcheck

staticcheck:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) $(PKGS)

demo: build build-dev
	./hack/demo.sh

## bench: every benchmark; then the artifact benchmarks of issue 27 (create
## image, the same rebuilt, create pxe-files, a minimal ISO with its root file
## system; cold and warm, 1 GiB dense base, against cp + fsync) on TMPDIR's
## file system and, as root, on an XFS loop mount with reflinks
## (hack/bench-xfs.sh); then issue 36's extended ISO from a payload of several
## GiB (BENCH_PAYLOAD_MIB, default 4096), read from a registry and from an
## oc-mirror store, against cp of the same bytes (docs/airgap.md
## "Measured"; about 12 GiB of TMPDIR at its peak). BENCHTIME
## sets their iterations.
## Last, agentiso serve against Debian's nginx on the same 1 GiB file over
## loopback, HTTP and HTTPS (hack/bench-serve.sh, issue 39; about 7 minutes;
## docs/serve-boot.md).
BENCHTIME ?= 5x
bench:
	$(GO) test -run '^$$' -bench . -skip 'Artifact|ExtendedISOScaled' -benchmem $(PKGS)
	@echo "bench: artifacts on $$(df -T "$${TMPDIR:-/tmp}" | awk 'NR==2{print $$2}') ($${TMPDIR:-/tmp}); load average: $$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
	$(GO) test -run '^$$' -bench 'Artifact' -benchtime $(BENCHTIME) ./pkg/isoeditor/
	bash hack/bench-xfs.sh $(GO) $(BENCHTIME)
	$(GO) test -run '^$$' -bench 'ExtendedISOScaled' -benchtime $(BENCHTIME) -timeout 60m ./pkg/extiso/
	bash hack/bench-serve.sh $(GO)

## e2e: boot ISOs under QEMU (BIOS and UEFI) and check what the kernel received
## (docs/e2e.md). Installs its Debian packages, builds the cached boot fixture,
## then runs test/e2e with the e2e build tag. E2E_CASES=file.json adds ISOs.
## The other architectures (TestBootArch, as make e2e-arch) run in the same
## go test: every boot of both is a parallel subtest, one guest per core.
## Where their QEMU is not installed they are skipped, except in CI, which
## installs it (hack/install-e2e-deps.sh arch) and fails without it.
E2E_FIXTURE ?= .cache/boot-fixture/fixture.iso
E2E_CASES ?= .cache/e2e-cases.json
E2E_TIMEOUT ?= 60m

e2e: e2e-deps build
	$(MAKE) e2e-fixture
	bash hack/e2e-examples.sh $(BIN) $(E2E_FIXTURE) $(E2E_CASES)
	AGENTISO_E2E_FIXTURE=$(abspath $(E2E_FIXTURE)) AGENTISO_E2E_CASES=$(if $(E2E_CASES),$(abspath $(E2E_CASES))) \
		AGENTISO_E2E_ARCHES='$(ARCHES)' AGENTISO_E2E_BIN=$(abspath $(BIN)) \
		$(GO) test -tags e2e -count=1 -timeout $(E2E_TIMEOUT) -v -run '^TestBoot(Arch)?$$' ./test/e2e/

e2e-deps:
	bash hack/install-e2e-deps.sh $(if $(CI),arch)

e2e-fixture: $(E2E_FIXTURE)

# The fixture's miniso.dat is packed by hack/packminiso with pkg/isoeditor's
# PackMiniso: a change to either rebuilds it.
$(E2E_FIXTURE): hack/build-boot-fixture.sh hack/boot-fixture-init.sh hack/boot-fixture-udhcpc.sh hack/packminiso/main.go pkg/isoeditor/miniso.go
	@mkdir -p $(dir $@)
	bash hack/build-boot-fixture.sh $@

## e2e-arch: boot the aarch64, ppc64le and s390x fixtures' agent ISO, a
## negative control, the minimal ISO and the PXE files under QEMU TCG
## (docs/e2e.md "Other architectures"), two guests at a time on two cores;
## also the last step of make e2e. About 2.5 minutes of CPU; ARCHES selects
## architectures. Fixtures are cached in ~/.cache/agentiso/arch-fixture
## (hack/build-arch-fixture.sh).
ARCHES ?= ppc64le aarch64 s390x
E2E_ARCH_TIMEOUT ?= 45m
E2E_ARCH_TEST = AGENTISO_E2E_ARCHES='$(ARCHES)' AGENTISO_E2E_BIN=$(abspath $(BIN)) \
	$(GO) test -tags e2e -count=1 -timeout $(E2E_ARCH_TIMEOUT) -v -run '^TestBootArch$$' ./test/e2e/

e2e-arch: build
	bash hack/install-e2e-deps.sh arch
	$(E2E_ARCH_TEST)

## e2e-live: the live lab (docs/e2e.md): agent ISOs boot a real systemd +
## podman + NetworkManager userspace in QEMU guests inside a network namespace
## of the test's own, with the REAL assisted-service, agent-installer client
## and agent of each LIVE_UPSTREAM branch. Installs its Debian packages,
## builds (or finds in
## ~/.cache/agentiso) the live fixture, the images' Debian bases and the
## upstream components, then runs test/live with the e2elive tag. Needs root.
## LIVE_RUN selects scenarios (go test -run); LIVE_SET=full runs every
## scenario on every branch (default ci: what .ci/run runs).
LIVE_TIMEOUT ?= 75m
LIVE_RUN ?= ^TestLive$$
# The ci set runs the lab's release only (its build is the oracle's too); the
# newest branch runs with LIVE_SET=full and in make e2e-live-matrix (CI time:
# a fresh machine's build of a second branch is 10 to 16 minutes).
LIVE_UPSTREAM ?= $(or $(AGENTISO_LIVE_UPSTREAM),$(if $(filter full,$(LIVE_SET)),release-4.20 release-4.23,release-4.20))
LIVE_SET ?= ci

e2e-live: build
	bash hack/live-deps.sh
	bash hack/redfish-deps.sh
	bash hack/build-live-fixture.sh
	bash hack/upstream-deps.sh
	bash hack/build-live-image-base.sh service
	bash hack/build-live-image-base.sh agent
	@for b in $(LIVE_UPSTREAM); do bash hack/build-upstream.sh $$b || exit 1; done
	AGENTISO_LIVE_BIN=$(abspath $(BIN)) AGENTISO_LIVE_UPSTREAM='$(LIVE_UPSTREAM)' AGENTISO_LIVE_SET='$(LIVE_SET)' \
		$(GO) test -tags e2elive -count=1 -timeout $(LIVE_TIMEOUT) -v -run '$(LIVE_RUN)' ./test/live/

## e2e-upstream: the upstream oracle (docs/e2e.md): builds (or finds in
## ~/.cache/agentiso/upstream) the REAL assisted-service and agent-installer
## client of UPSTREAM_BRANCH from the pinned sources, runs them on loopback
## with Debian's PostgreSQL 15 and the env files of an ISO agentiso writes,
## and registers the cluster and infra-env. Installs its Debian packages.
UPSTREAM_BRANCH ?= release-4.20
UPSTREAM_TIMEOUT ?= 60m

e2e-upstream: build
	bash hack/upstream-deps.sh
	AGENTISO_UPSTREAM_BRANCH=$(UPSTREAM_BRANCH) AGENTISO_UPSTREAM_AGENTISO=$(abspath $(BIN)) \
		$(GO) test -tags upstream -count=1 -timeout $(UPSTREAM_TIMEOUT) -v -run '^(TestOracle|TestHubManifestsAgainstCRDTypes)$$' ./test/upstream/

## e2e-hub: the hub hand-over with the real controllers (docs/hub.md): the
## output of `create cluster-manifests --for-hub` for examples/compact-bmc
## applied to the real kube-apiserver (make testapiserver) and reconciled by
## the REAL assisted-service of HUB_BRANCH in its Kubernetes mode, with
## PostgreSQL. Builds (or finds in ~/.cache/agentiso) both. Needs root (or
## user namespaces) and a free port 8080.
HUB_BRANCH ?= release-4.23

e2e-hub: build testapiserver
	bash hack/upstream-deps.sh
	AGENTISO_HUB_BRANCH=$(HUB_BRANCH) AGENTISO_UPSTREAM_AGENTISO=$(abspath $(BIN)) \
		$(GO) test -tags upstream -count=1 -timeout $(UPSTREAM_TIMEOUT) -v -run '^TestHubControllers$$' ./test/upstream/

## upstream-build: build the real upstream components of UPSTREAM_BRANCH
## (hack/build-upstream.sh; prints the cache directory last).
upstream-build:
	bash hack/build-upstream.sh $(UPSTREAM_BRANCH)

## e2e-live-matrix: one SNO scenario of the live lab against the real
## assisted-service, client and agent of every upstream branch in the lock
## file (test/upstream/upstream.lock); writes the result table into
## docs/e2e.md. Builds each branch (hack/build-upstream.sh) when not cached:
## expect 10 to 20 minutes per branch on a 2-core machine.
MATRIX_TIMEOUT ?= 240m

e2e-live-matrix: build
	bash hack/live-deps.sh
	bash hack/redfish-deps.sh
	bash hack/build-live-fixture.sh
	AGENTISO_LIVE_MATRIX=1 AGENTISO_LIVE_BIN=$(abspath $(BIN)) \
		$(GO) test -tags e2elive -count=1 -timeout $(MATRIX_TIMEOUT) -v -run '^TestLiveMatrix$$' ./test/live/

clean:
	rm -rf bin
