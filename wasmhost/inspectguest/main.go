// Command inspectguest is the inspect-only sandbox guest, which `memvanta
// inspect` and `--verify` run on untrusted files. It links only the GGUF
// parser and the report (core/gguf, core/inspect, wasmhost/job), no kernels
// or model code, so it is a fraction of the full guest's size: wazero
// decodes, validates and loads the compiled code of the whole module on
// every start, even from the compilation cache, and that is most of a
// sandboxed inspect's time. Same sandbox, same protocol as wasmhost/guest.
package main

import (
	"os"

	"github.com/memvanta/memvanta/wasmhost/internal/guestmain"
)

func main() {
	os.Exit(guestmain.Run(os.Args[1:], map[string]guestmain.Mode{
		"inspect": guestmain.Inspect,
	}))
}
