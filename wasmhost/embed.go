package wasmhost

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
)

//go:generate ./build-guest.sh guest.wasm ./guest
//go:generate go run ./internal/gensum guest.wasm guest_sum.go guestSHA256
//go:generate ./build-guest.sh inspect.wasm ./inspectguest
//go:generate go run ./internal/gensum inspect.wasm inspect_sum.go inspectSHA256

// The sandbox guests (wasmhost/guest and wasmhost/inspectguest built for
// wasip1) are embedded so that `go build ./cmd/memvanta` alone yields a
// binary with the sandbox inside. Regenerate both with
// `go generate ./wasmhost/...`; CI fails if a committed file is stale
// (scripts/check-wasm-stale.sh).
var (
	//go:embed guest.wasm
	guestWasm []byte
	//go:embed inspect.wasm
	inspectWasm []byte
)

// Guest selects which embedded guest a Host compiles and runs.
type Guest int

const (
	// GuestFull runs every job: inspect, kernel vectors, forward passes.
	GuestFull Guest = iota
	// GuestInspect runs inspect and verify only. It links no kernel or
	// model code, so wazero has less to decode, validate and load on every
	// start; `memvanta inspect` and --verify use it.
	GuestInspect
)

func (g Guest) String() string {
	switch g {
	case GuestFull:
		return "full"
	case GuestInspect:
		return "inspect"
	}
	return fmt.Sprintf("Guest(%d)", int(g))
}

// guests lists every embedded guest, for pruning the cache (a current guest's
// directory is never stale).
var guests = []Guest{GuestFull, GuestInspect}

// module returns the guest's bytes and the hex SHA-256 of them, which keys
// the compilation cache so a different guest never reuses another's entries.
// The sum is generated with the guest (guest_sum.go, inspect_sum.go) rather
// than hashed at start-up, which would cost milliseconds on every sandboxed
// inspect; a test checks it.
func (g Guest) module() (wasm []byte, sum string, err error) {
	switch g {
	case GuestFull:
		return guestWasm, guestSHA256, nil
	case GuestInspect:
		return inspectWasm, inspectSHA256, nil
	}
	return nil, "", fmt.Errorf("unknown sandbox guest %v", g)
}

// SHA256 is the hex SHA-256 of the embedded guest g ("" if g is unknown).
func (g Guest) SHA256() string {
	_, sum, _ := g.module()
	return sum
}

// GuestSHA256 is the hex SHA-256 of the embedded full guest.
func GuestSHA256() string { return guestSHA256 }

// sumOfEmbedded hashes the embedded bytes of g (the test's reference).
func sumOfEmbedded(g Guest) string {
	wasm, _, _ := g.module()
	s := sha256.Sum256(wasm)
	return hex.EncodeToString(s[:])
}
