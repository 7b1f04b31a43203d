package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Exit statuses, one scheme for every subcommand (documented in the README).
const (
	exitOK          = 0
	exitRuntime     = 1   // the command ran and failed: unreadable file, bad model, I/O error
	exitUsage       = 2   // bad flags or arguments: nothing was attempted
	exitInterrupted = 130 // Ctrl-C / SIGTERM: 128 + SIGINT, output so far is complete
	exitPipe        = 141 // stdout closed by the reader (… | head): 128 + SIGPIPE
)

// cli is a subcommand's flag set with llama.cpp's spellings: every option
// may have several names (`-m`, `--model`), all bound to one value, and
// help lists each option once, in titled groups, on stdout. Go's flag
// package accepts one or two dashes for any name, so `-ngl`-style
// multi-letter short names work too.
//
// Options registered directly on fs (core/synth's shape flags, for
// example) are listed under "Other flags", so help never omits one.
type cli struct {
	fs       *flag.FlagSet
	name     string // "generate"
	synopsis string // after "usage: memvanta "
	about    string // one paragraph under the synopsis
	groups   []*optGroup
	// otherTitle heads the options registered directly on fs ("Other
	// flags" when empty).
	otherTitle string
}

type optGroup struct {
	title string
	opts  []*opt
}

type opt struct {
	names []string // as registered, without dashes; the first is the short one when there is one
	arg   string   // value placeholder, "" for booleans
	usage string
	def   string // default shown in help, "" for none
}

func newCLI(name, synopsis, about string) *cli {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &cli{fs: fs, name: name, synopsis: synopsis, about: about}
}

// group starts a titled group; options registered after it belong to it.
func (c *cli) group(title string) {
	c.groups = append(c.groups, &optGroup{title: title})
}

// add binds every name in names ("m|model") to v.
func (c *cli) add(v flag.Value, names, arg, usage string) {
	if len(c.groups) == 0 {
		c.group("Options")
	}
	// A name written with a leading dash ("-ngl") is a llama.cpp
	// multi-letter short option and is shown with one dash.
	o := &opt{names: strings.Split(names, "|"), arg: arg, usage: usage}
	if b, ok := v.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
		if _, list := v.(*listValue); !list && v.String() != "" {
			o.def = v.String()
		}
	}
	for _, n := range o.names {
		c.fs.Var(v, strings.TrimPrefix(n, "-"), usage)
	}
	g := c.groups[len(c.groups)-1]
	g.opts = append(g.opts, o)
}

func (c *cli) stringVar(p *string, names, arg, def, usage string) {
	*p = def
	c.add((*stringValue)(p), names, arg, usage)
}

func (c *cli) intVar(p *int, names, arg string, def int, usage string) {
	*p = def
	c.add((*intValue)(p), names, arg, usage)
}

func (c *cli) boolVar(p *bool, names, usage string) {
	c.add((*boolValue)(p), names, "", usage)
}

func (c *cli) float32Var(p *float32, names, arg string, def float32, usage string) {
	*p = def
	c.add((*float32Value)(p), names, arg, usage)
}

func (c *cli) durationVar(p *time.Duration, names, arg string, def time.Duration, usage string) {
	*p = def
	c.add((*durationValue)(p), names, arg, usage)
}

// listVar collects every occurrence (--stop a --stop b).
func (c *cli) listVar(p *[]string, names, arg, usage string) {
	c.add((*listValue)(p), names, arg, usage)
}

// defaultText replaces the default help shows for the option named name,
// for a default computed after parsing (bench's -b follows -p).
func (c *cli) defaultText(name, text string) {
	for _, g := range c.groups {
		for _, o := range g.opts {
			for _, n := range o.names {
				if strings.TrimPrefix(n, "-") == name {
					o.def = text
					return
				}
			}
		}
	}
	panic("defaultText: no option " + name) // a programming error, found by any -h test
}

// isSet reports whether any spelling of the option named name was given.
func (c *cli) isSet(name string) bool {
	names := []string{name}
	for _, g := range c.groups {
		for _, o := range g.opts {
			for _, n := range o.names {
				if strings.TrimPrefix(n, "-") == name {
					names = nil
					for _, m := range o.names {
						names = append(names, strings.TrimPrefix(m, "-"))
					}
				}
			}
		}
	}
	set := false
	c.fs.Visit(func(f *flag.Flag) {
		for _, n := range names {
			if f.Name == n {
				set = true
			}
		}
	})
	return set
}

// parse parses args. It returns done=true with the exit status when the
// command should stop: help was asked for (printed on stdout, status 0) or
// the command line is wrong (one line on stderr, status 2). Positional
// arguments are refused unless allowArgs.
func (c *cli) parse(args []string, stdout, stderr io.Writer, allowArgs bool) (done bool, status int) {
	err := c.fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		c.help(stdout)
		return true, exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "memvanta %s: %v (see memvanta %s -h)\n", c.name, err, c.name)
		return true, exitUsage
	}
	if !allowArgs && c.fs.NArg() > 0 {
		fmt.Fprintf(stderr, "memvanta %s: unexpected argument %q (see memvanta %s -h)\n", c.name, c.fs.Arg(0), c.name)
		return true, exitUsage
	}
	return false, exitOK
}

// usageErr prints one line for a command-line mistake found after parsing
// and returns the usage status.
func (c *cli) usageErr(stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, "memvanta %s: %s (see memvanta %s -h)\n", c.name, fmt.Sprintf(format, a...), c.name)
	return exitUsage
}

// help prints the synopsis and every option, grouped, with defaults.
func (c *cli) help(w io.Writer) {
	fmt.Fprintf(w, "usage: memvanta %s\n", c.synopsis)
	if c.about != "" {
		fmt.Fprintf(w, "\n%s\n", c.about)
	}
	known := map[string]bool{"h": true, "help": true}
	groups := c.groups
	for _, g := range groups {
		for _, o := range g.opts {
			for _, n := range o.names {
				known[strings.TrimPrefix(n, "-")] = true
			}
		}
	}
	var other optGroup
	other.title = "Other flags"
	if c.otherTitle != "" {
		other.title = c.otherTitle
	}
	c.fs.VisitAll(func(f *flag.Flag) {
		if known[f.Name] {
			return
		}
		arg, usage := flag.UnquoteUsage(f)
		o := &opt{names: []string{f.Name}, arg: strings.ToUpper(arg), usage: usage}
		if arg != "" && f.DefValue != "" && f.DefValue != "0" {
			o.def = f.DefValue
		}
		other.opts = append(other.opts, o)
	})
	if len(other.opts) > 0 {
		sort.Slice(other.opts, func(i, j int) bool { return other.opts[i].names[0] < other.opts[j].names[0] })
		groups = append(groups[:len(groups):len(groups)], &other)
	}
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, o := range g.opts {
			var sp []string
			for _, n := range o.names {
				if len(n) == 1 || n[0] == '-' {
					sp = append(sp, "-"+strings.TrimPrefix(n, "-"))
				} else {
					sp = append(sp, "--"+n)
				}
			}
			left := "  " + strings.Join(sp, ", ")
			if o.arg != "" {
				left += " " + o.arg
			}
			text := o.usage
			if o.def != "" {
				text += " (default " + o.def + ")"
			}
			if len(left) >= 30 {
				fmt.Fprintf(w, "%s\n%30s%s\n", left, "", text)
			} else {
				fmt.Fprintf(w, "%-30s%s\n", left, text)
			}
		}
	}
	fmt.Fprintf(w, "\nExit status: 0 ok, 1 runtime error, 2 usage error, 130 interrupted, 141 stdout closed.\n")
}

// Values. Each prints its default the way a user would type it.

type stringValue string

func (v *stringValue) Set(s string) error { *v = stringValue(s); return nil }
func (v *stringValue) String() string     { return string(*v) }

type intValue int

func (v *intValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, strconv.IntSize)
	if err != nil {
		return numErr(err)
	}
	*v = intValue(n)
	return nil
}
func (v *intValue) String() string { return strconv.Itoa(int(*v)) }

type boolValue bool

func (v *boolValue) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("must be true or false")
	}
	*v = boolValue(b)
	return nil
}
func (v *boolValue) String() string   { return strconv.FormatBool(bool(*v)) }
func (v *boolValue) IsBoolFlag() bool { return true }

// float32Value prints its shortest float32 form: 0.8, not 0.800000011920929.
type float32Value float32

func (v *float32Value) Set(s string) error {
	f, err := strconv.ParseFloat(s, 32)
	if err != nil {
		return numErr(err)
	}
	if math.IsNaN(f) {
		return errors.New("must be a number")
	}
	*v = float32Value(f)
	return nil
}
func (v *float32Value) String() string { return strconv.FormatFloat(float64(*v), 'g', -1, 32) }

type durationValue time.Duration

func (v *durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("not a duration (such as 10s or 2m)")
	}
	*v = durationValue(d)
	return nil
}
func (v *durationValue) String() string { return time.Duration(*v).String() }

type listValue []string

func (v *listValue) Set(s string) error { *v = append(*v, s); return nil }
func (v *listValue) String() string {
	if v == nil || len(*v) == 0 {
		return ""
	}
	return strings.Join(*v, ",")
}

func numErr(err error) error {
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		if errors.Is(ne.Err, strconv.ErrRange) {
			return errors.New("out of range")
		}
		return errors.New("not a number")
	}
	return err
}
