package wasmhost

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
)

//go:generate ./build-guest.sh guest.wasm

// guestWasm is the sandbox guest (wasmhost/guest built for wasip1), embedded
// so that `go build ./cmd/memvanta` alone yields a binary with the sandbox
// inside. Regenerate with `go generate ./wasmhost/...`; CI fails if the
// committed file is stale (scripts/check-wasm-stale.sh).
//
//go:embed guest.wasm
var guestWasm []byte

// GuestSHA256 is the hex SHA-256 of the embedded guest, which keys the
// compilation cache so a different guest never reuses another's entries.
func GuestSHA256() string {
	s := sha256.Sum256(guestWasm)
	return hex.EncodeToString(s[:])
}
