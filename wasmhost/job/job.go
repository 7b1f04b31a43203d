// Package job is the inspect work the sandbox guest performs, as a plain
// portable library: the guest (wasmhost/guest) and the native CLI
// (`memvanta inspect --no-sandbox`) both call Inspect, so the two paths print
// the same bytes by construction, and the guest's command line is encoded and
// decoded here so host and guest cannot drift apart.
package job

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/inspect"
)

// InspectOptions selects the report.
type InspectOptions struct {
	JSON    bool   // the documented JSON schema instead of the human summary
	Full    bool   // JSON: arrays in full
	Tensors bool   // text: list every tensor
	Name    string // display name of the file (the CLI passes its base name)
	// VerifyOnly parses and validates without writing a report.
	VerifyOnly bool
	// Limits bound the parser; zero fields take gguf.DefaultLimits.
	Limits gguf.Limits
}

// Inspect parses the GGUF header in r (size bytes) and writes the report to
// w. On a parse error nothing is written and the error is returned as Parse
// gave it (a *gguf.Error for any defect of the file).
func Inspect(w io.Writer, r io.ReaderAt, size int64, o InspectOptions) error {
	f, err := gguf.Parse(r, size, o.Limits)
	if err != nil {
		return err
	}
	if o.VerifyOnly {
		return nil
	}
	rep := inspect.Build(f, inspect.Options{Name: o.Name, Full: o.Full, Tensors: o.Tensors})
	if o.JSON {
		err = rep.WriteJSON(w)
	} else {
		err = rep.WriteText(w)
	}
	if err != nil {
		return &OutputError{Err: err}
	}
	return nil
}

// OutputError is a failure to write the report (not a defect of the file).
type OutputError struct{ Err error }

func (e *OutputError) Error() string { return "writing the report: " + e.Err.Error() }
func (e *OutputError) Unwrap() error { return e.Err }

// Args encodes o and the guest-side path as the guest's inspect command line.
func (o InspectOptions) Args(path string) []string {
	a := []string{"inspect"}
	if o.JSON {
		a = append(a, "--json")
	}
	if o.Full {
		a = append(a, "--full")
	}
	if o.Tensors {
		a = append(a, "--tensors")
	}
	if o.VerifyOnly {
		a = append(a, "--verify")
	}
	if o.Name != "" {
		a = append(a, "--name="+o.Name)
	}
	if o.Limits != (gguf.Limits{}) {
		l := o.Limits
		a = append(a, fmt.Sprintf("--limits=%d,%d,%d,%d,%d,%d",
			l.MaxStringLen, l.MaxArrayLen, l.MaxKV, l.MaxTensors, l.MaxDepth, l.MaxHeaderBytes))
	}
	return append(a, "--", path)
}

// ParseArgs decodes what Args encoded (without the leading "inspect").
func ParseArgs(args []string) (o InspectOptions, path string, err error) {
	for len(args) > 0 {
		a := args[0]
		args = args[1:]
		switch {
		case a == "--":
			if len(args) != 1 {
				return o, "", fmt.Errorf("inspect: want exactly one file after --, got %q", args)
			}
			return o, args[0], nil
		case a == "--json":
			o.JSON = true
		case a == "--full":
			o.Full = true
		case a == "--tensors":
			o.Tensors = true
		case a == "--verify":
			o.VerifyOnly = true
		case strings.HasPrefix(a, "--name="):
			o.Name = strings.TrimPrefix(a, "--name=")
		case strings.HasPrefix(a, "--limits="):
			if o.Limits, err = parseLimits(strings.TrimPrefix(a, "--limits=")); err != nil {
				return o, "", err
			}
		default:
			return o, "", fmt.Errorf("inspect: unknown argument %q", a)
		}
	}
	return o, "", errors.New("inspect: missing -- FILE")
}

func parseLimits(s string) (gguf.Limits, error) {
	f := strings.Split(s, ",")
	if len(f) != 6 {
		return gguf.Limits{}, fmt.Errorf("inspect: --limits wants 6 numbers, got %q", s)
	}
	var u [6]uint64
	for i, x := range f {
		v, err := strconv.ParseUint(x, 10, 63)
		if err != nil {
			return gguf.Limits{}, fmt.Errorf("inspect: --limits field %d: %w", i, err)
		}
		u[i] = v
	}
	return gguf.Limits{MaxStringLen: u[0], MaxArrayLen: u[1], MaxKV: u[2], MaxTensors: u[3],
		MaxDepth: int(u[4]), MaxHeaderBytes: int64(u[5])}, nil
}
