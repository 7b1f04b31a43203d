// Command guest is the full sandbox guest: every job the host can run
// (inspect, kernel vectors, a model's forward pass). It is built for
// GOOS=wasip1 GOARCH=wasm, embedded in the native binary and executed by
// wasmhost under wazero with no environment, no network, fake clocks and a
// read-only filesystem holding only the file under inspection. The real work
// is in portable packages (job, forwardjob, kvec) that native code calls
// directly, so both paths compute the same bytes. `memvanta inspect` uses
// the much smaller wasmhost/inspectguest instead, which starts faster.
package main

import (
	"os"

	"github.com/memvanta/memvanta/wasmhost/internal/guestmain"
)

func main() {
	os.Exit(guestmain.Run(os.Args[1:], map[string]guestmain.Mode{
		"inspect": guestmain.Inspect,
		"kernels": runKernels,
		"forward": runForward,
	}))
}
