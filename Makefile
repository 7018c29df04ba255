# agentiso build and test entry points. `make test` is what CI runs.
GO ?= go
BIN := bin/agentiso
PKGS := ./...
FUZZTIME ?= 3s

.PHONY: build test unit lint fmt-check vet fuzz-seeds demo bench clean

build:
	$(GO) build -o $(BIN) ./cmd/agentiso

## test: everything CI checks (format, vet, unit + script tests, fuzz seed corpora)
test: fmt-check vet unit

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

# Unit tests, testscript CLI tests and every fuzz test's seed corpus
# (go test runs Fuzz* seeds as ordinary tests).
unit:
	$(GO) test -count=1 $(PKGS)

lint: fmt-check vet

demo: build
	./hack/demo.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

clean:
	rm -rf bin
