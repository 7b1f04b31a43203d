// Package guestmain is the start-up and dispatch shared by the two sandbox
// guests, wasmhost/guest (every job) and wasmhost/inspectguest (inspect
// only, small so that a sandboxed inspect starts fast), so both read the
// host's command line, report failures and misbehave for the cap tests in
// exactly the same way.
package guestmain

import (
	"bufio"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// Exit statuses the host interprets. The Go runtime itself exits with 2 on a
// fatal error (out of memory, panic), which is why a clean failure uses 1 and
// a usage error 3.
const (
	ExitOK    = 0
	ExitFail  = 1 // job failed: stderr holds the error as JSON
	ExitUsage = 3 // the host sent arguments this guest does not understand
)

// Mode runs one job on its arguments (after the mode name) and returns the
// exit status.
type Mode func(args []string) int

// Run applies the host's --memlimit prefix and runs the mode args[0] names:
// one of modes, or a cap-test mode (underscore names, see testMode).
func Run(args []string, modes map[string]Mode) int {
	// The host tells the guest its memory cap so the Go collector works
	// harder near it instead of growing linear memory into the wall; the
	// headroom covers stacks, data and the runtime's own structures.
	if len(args) > 0 && strings.HasPrefix(args[0], "--memlimit=") {
		if n, err := strconv.ParseInt(strings.TrimPrefix(args[0], "--memlimit="), 10, 64); err == nil && n > 0 {
			debug.SetMemoryLimit(n - n/8)
			debug.SetGCPercent(-1)
		}
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "guest: no mode")
		return ExitUsage
	}
	if m, ok := modes[args[0]]; ok {
		return m(args[1:])
	}
	switch args[0] {
	case "_alloc", "_spin", "_spincall", "_flood", "_panic":
		return testMode(args[0], args[1:])
	}
	fmt.Fprintf(os.Stderr, "guest: unknown mode %q\n", args[0])
	return ExitUsage
}

// sink keeps test allocations reachable so the compiler cannot drop them.
var sink [][]byte

// testMode implements the behaviours the host's cap tests need from a guest
// that misbehaves on purpose: allocate without bound, spin, flood stdout,
// panic. They are reachable only through arguments the host chooses.
func testMode(mode string, args []string) int {
	switch mode {
	case "_alloc": // allocate N MiB in 1 MiB chunks, touching each
		n, _ := strconv.Atoi(argOr(args, 0, "1"))
		for i := 0; i < n; i++ {
			b := make([]byte, 1<<20)
			for j := range b {
				b[j] = byte(j)
			}
			sink = append(sink, b)
		}
		fmt.Println(len(sink))
		return ExitOK
	case "_spin": // loop N times (forever without N) making no host call
		n, _ := strconv.ParseUint(argOr(args, 0, "0"), 10, 64)
		x := uint64(1)
		for i := uint64(0); n == 0 || i < n; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
		if x == 42 {
			fmt.Println(x)
		}
		return ExitOK
	case "_spincall": // loop forever reading the clock (a host call)
		var t int64
		for {
			t += time.Now().UnixNano()
			if t == 42 {
				fmt.Println(t)
			}
		}
	case "_flood": // write N bytes to stdout (or stderr with "2")
		n, _ := strconv.Atoi(argOr(args, 0, "0"))
		f := os.Stdout
		if argOr(args, 1, "1") == "2" {
			f = os.Stderr
		}
		w := bufio.NewWriterSize(f, 64<<10)
		for i := 0; i < n; i++ {
			if err := w.WriteByte('x'); err != nil {
				return ExitFail
			}
		}
		if err := w.Flush(); err != nil {
			return ExitFail
		}
		return ExitOK
	case "_panic":
		panic("guest: _panic test mode")
	}
	return ExitUsage
}

func argOr(args []string, i int, def string) string {
	if i < len(args) {
		return args[i]
	}
	return def
}
