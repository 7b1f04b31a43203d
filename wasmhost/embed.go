package wasmhost

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
)

//go:generate ./build-guest.sh guest.wasm
//go:generate go run ./internal/gensum guest.wasm guest_sum.go

// guestWasm is the sandbox guest (wasmhost/guest built for wasip1), embedded
// so that `go build ./cmd/memvanta` alone yields a binary with the sandbox
// inside. Regenerate with `go generate ./wasmhost/...`; CI fails if the
// committed file is stale (scripts/check-wasm-stale.sh).
//
//go:embed guest.wasm
var guestWasm []byte

// GuestSHA256 is the hex SHA-256 of the embedded guest, which keys the
// compilation cache so a different guest never reuses another's entries. It
// is generated with the guest (guest_sum.go) rather than hashed at start-up,
// which would cost milliseconds on every sandboxed inspect; a test checks it.
func GuestSHA256() string { return guestSHA256 }

// sumOfGuest hashes the embedded bytes (the test's reference).
func sumOfGuest() string {
	s := sha256.Sum256(guestWasm)
	return hex.EncodeToString(s[:])
}
