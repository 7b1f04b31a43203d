package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeBlock is a fenced block of README.md or docs/*.md marked with
// <!-- readme-test: run --> (every `$ ./memvanta ...` command must exit 0)
// or <!-- readme-test: output --> (and every output line shown after a
// command must be a line of its stdout or stderr; in lines reporting
// timings or sizes — tok/s, MiB, seed — numbers and the kernel name may
// differ).
type readmeBlock struct {
	line   int // line of the opening fence in its file
	output bool
	cmds   []readmeCmd
}

type readmeCmd struct {
	line  int
	shell string   // the command, continuation lines joined
	want  []string // output lines shown after it
}

func parseREADME(text string) []readmeBlock {
	lines := strings.Split(text, "\n")
	var blocks []readmeBlock
	for i := 0; i < len(lines); i++ {
		mark := strings.TrimSpace(lines[i])
		if mark != "<!-- readme-test: run -->" && mark != "<!-- readme-test: output -->" {
			continue
		}
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "```") {
			blocks = append(blocks, readmeBlock{line: i + 1}) // reported as malformed
			continue
		}
		b := readmeBlock{line: i + 2, output: strings.Contains(mark, "output")}
		for j := i + 2; j < len(lines) && !strings.HasPrefix(lines[j], "```"); j++ {
			l := lines[j]
			switch {
			case strings.HasPrefix(l, "$ "):
				c := readmeCmd{line: j + 1, shell: strings.TrimPrefix(l, "$ ")}
				for strings.HasSuffix(c.shell, "\\") && j+1 < len(lines) {
					j++
					c.shell = strings.TrimSuffix(c.shell, "\\") + " " + strings.TrimSpace(lines[j])
				}
				b.cmds = append(b.cmds, c)
			case len(b.cmds) > 0 && !strings.HasPrefix(l, "#"):
				last := &b.cmds[len(b.cmds)-1]
				last.want = append(last.want, l)
			}
		}
		blocks = append(blocks, b)
	}
	return blocks
}

var (
	numRE     = regexp.MustCompile(`\d+(\.\d+)?`)
	kernelsRE = regexp.MustCompile(`kernels [a-z0-9]+`)
)

// normalize hides what legitimately varies between runs and machines in
// statistics lines.
func normalize(l string) string {
	if strings.Contains(l, "tok/s") || strings.Contains(l, "MiB") || strings.Contains(l, "seed ") {
		l = kernelsRE.ReplaceAllString(l, "kernels K")
		l = numRE.ReplaceAllString(l, "N")
	}
	return l
}

// minDocCommands is how many marked ./memvanta commands README.md and
// docs/*.md hold together; fewer means a mark was lost in an edit.
const minDocCommands = 9

// TestREADMECommands runs the marked commands of README.md and of every
// docs/*.md, file by file and in order within a file, each file in a
// scratch directory of its own holding ./memvanta (the built binary),
// ../shared (the real one) and testdata, as a user on a fresh clone would.
// A file's blocks may use what its earlier blocks wrote (s1.gguf), never
// another file's.
func TestREADMECommands(t *testing.T) {
	shared, err := filepath.Abs("../../../shared")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(shared, "models", "stories260K-F32.gguf")); err != nil {
		t.Skipf("../shared with the trained model is not beside the repo: %v", err)
	}
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files := append([]string{"../../README.md"}, docs...)
	testdata, _ := filepath.Abs("../../testdata")
	bin := memvantaBin(t)
	ran := 0
	for _, path := range files {
		name, _ := filepath.Rel("../..", path)
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		blocks := parseREADME(string(text))
		if name == "README.md" && len(blocks) == 0 {
			t.Errorf("README.md has no block marked readme-test; the main command at least must be")
		}
		if len(blocks) == 0 {
			continue
		}
		t.Run(name, func(t *testing.T) {
			ran += runDocBlocks(t, name, blocks, bin, shared, testdata)
		})
	}
	if ran < minDocCommands {
		t.Errorf("only %d marked commands ran in README.md and docs/*.md, want at least %d", ran, minDocCommands)
	}
}

// runDocBlocks runs one file's marked blocks in a fresh scratch directory
// and returns how many commands it ran.
func runDocBlocks(t *testing.T, name string, blocks []readmeBlock, bin, shared, testdata string) int {
	root := t.TempDir()
	work := filepath.Join(root, "memvanta")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{bin, filepath.Join(work, "memvanta")}, {shared, filepath.Join(root, "shared")}, {testdata, filepath.Join(work, "testdata")}} {
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	ran := 0
	for _, b := range blocks {
		if len(b.cmds) == 0 {
			t.Errorf("%s:%d: readme-test mark without a fenced block of $ commands after it", name, b.line)
			continue
		}
		for _, c := range b.cmds {
			if !strings.HasPrefix(c.shell, "./memvanta ") {
				continue // go build: the binary is already built
			}
			cmd := exec.Command("bash", "-o", "pipefail", "-c", c.shell)
			cmd.Dir = work
			cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(root, "cache"), "HF_ENDPOINT=http://127.0.0.1:9")
			var out, errb strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			ran++
			if err != nil {
				t.Errorf("%s:%d: %s: %v\nstdout: %s\nstderr: %s", name, c.line, c.shell, err, out.String(), errb.String())
				continue
			}
			if !b.output {
				continue
			}
			got := map[string]bool{}
			for _, l := range strings.Split(out.String()+"\n"+errb.String(), "\n") {
				got[normalize(l)] = true
			}
			for _, w := range c.want {
				if !got[normalize(w)] {
					t.Errorf("%s:%d: %s: the file shows the line\n  %q\nwhich the command did not print; it printed\nstdout: %s\nstderr: %s",
						name, c.line, c.shell, w, out.String(), errb.String())
				}
			}
		}
	}
	return ran
}
