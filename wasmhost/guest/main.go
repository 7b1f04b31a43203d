// Command guest is the program the sandbox runs: it is built for
// GOOS=wasip1 GOARCH=wasm, embedded in the native binary and executed by
// wasmhost under wazero with no environment, no network, fake clocks and a
// read-only filesystem holding only the file under inspection. All real work
// is in package job, which the native CLI calls directly, so both paths print
// the same bytes.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:]))
}
