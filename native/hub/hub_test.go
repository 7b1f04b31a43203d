package hub

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeHub imitates the Hub endpoints hub uses: the paged tree listing and
// resolve (a redirect to a content URL that honours Range, with the
// X-Linked-Etag/X-Linked-Size headers). cutAt > 0 makes the next content
// answer stop after that many bytes, like a dropped connection.
type fakeHub struct {
	mu     sync.Mutex
	files  map[string][]byte // repository path -> content
	sums   map[string]string // overrides the listed sha256
	cutAt  int
	ranges []string // Range headers seen on content requests
	pages  int      // listing page size (0 = one page)
}

func (h *fakeHub) handler(t *testing.T) http.Handler {
	tree := func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/models/acme/tiny-GGUF/tree/main" {
			http.Error(w, `{"error":"Repository not found"}`, http.StatusNotFound)
			return
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		var names []string
		for n := range h.files {
			names = append(names, n)
		}
		sortStrings(names)
		type lfs struct {
			Oid  string `json:"oid"`
			Size int    `json:"size"`
		}
		type entry struct {
			Type string `json:"type"`
			Oid  string `json:"oid"`
			Size int    `json:"size"`
			Path string `json:"path"`
			LFS  *lfs   `json:"lfs,omitempty"`
		}
		all := []entry{{Type: "directory", Oid: "0", Path: "docs"}, {Type: "file", Oid: "abc", Size: 10, Path: "README.md"}}
		for _, n := range names {
			sum := sha256.Sum256(h.files[n])
			oid := hex.EncodeToString(sum[:])
			if s, ok := h.sums[n]; ok {
				oid = s
			}
			all = append(all, entry{Type: "file", Oid: "1111111111111111111111111111111111111111", Size: 134, Path: n,
				LFS: &lfs{Oid: oid, Size: len(h.files[n])}})
		}
		start := 0
		if c := r.URL.Query().Get("cursor"); c != "" {
			fmt.Sscan(c, &start)
		}
		end := len(all)
		if h.pages > 0 && start+h.pages < end {
			end = start + h.pages
			w.Header().Set("Link", fmt.Sprintf(`<%s?recursive=true&cursor=%d>; rel="next"`, r.URL.Path, end))
		}
		json.NewEncoder(w).Encode(all[start:end])
	}
	resolve := func(w http.ResponseWriter, r *http.Request) {
		file, ok := strings.CutPrefix(r.URL.Path, "/acme/tiny-GGUF/resolve/main/")
		h.mu.Lock()
		b, found := h.files[file]
		ok = ok && found
		h.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		sum := sha256.Sum256(b)
		w.Header().Set("X-Linked-Etag", `"`+hex.EncodeToString(sum[:])+`"`)
		w.Header().Set("X-Linked-Size", fmt.Sprint(len(b)))
		http.Redirect(w, r, "/cdn/"+file, http.StatusFound)
	}
	cdn := func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		b := h.files[strings.TrimPrefix(r.URL.Path, "/cdn/")]
		h.ranges = append(h.ranges, r.Header.Get("Range"))
		cut := h.cutAt
		h.cutAt = 0
		h.mu.Unlock()
		if cut > 0 {
			// Promise the whole file, send part of it, drop the connection.
			w.Header().Set("Content-Length", fmt.Sprint(len(b)))
			w.WriteHeader(http.StatusOK)
			w.Write(b[:cut])
			w.(http.Flusher).Flush()
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method != http.MethodGet:
			http.Error(w, "method", http.StatusMethodNotAllowed)
		case strings.HasPrefix(r.URL.Path, "/api/models/"):
			tree(w, r)
		case strings.HasPrefix(r.URL.Path, "/cdn/"):
			cdn(w, r)
		default:
			resolve(w, r)
		}
	})
}

func sortStrings(s []string) {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
}

func model(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../../testdata/gguf/valid/base.gguf")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newTestClient(t *testing.T, h *fakeHub) (*Client, *[]string) {
	t.Helper()
	srv := httptest.NewServer(h.handler(t))
	t.Cleanup(srv.Close)
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_TOKEN", "")
	c := NewClient(t.TempDir())
	var verified []string
	c.Verify = func(ctx context.Context, path string) error {
		verified = append(verified, path)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.HasPrefix(b, []byte("GGUF")) {
			return errors.New("not a GGUF file")
		}
		return nil
	}
	return c, &verified
}

func TestParseRef(t *testing.T) {
	cases := []struct {
		in   string
		want Ref
		err  bool
	}{
		{in: "hf.co/acme/tiny-GGUF", want: Ref{Owner: "acme", Repo: "tiny-GGUF"}},
		{in: "hf.co/acme/tiny-GGUF:Q8_0", want: Ref{Owner: "acme", Repo: "tiny-GGUF", Tag: "Q8_0"}},
		{in: "hf.co/acme/tiny-GGUF:latest", want: Ref{Owner: "acme", Repo: "tiny-GGUF"}},
		{in: "huggingface.co/acme/tiny-GGUF/sub/m.Q4_0.gguf", want: Ref{Owner: "acme", Repo: "tiny-GGUF", File: "sub/m.Q4_0.gguf"}},
		{in: "hf.co/acme", err: true},
		{in: "hf.co/acme/tiny/../../etc/x.gguf", err: true},
		{in: "hf.co/acme/tiny//x.gguf", err: true},
		{in: "hf.co/acme/tiny/README.md", err: true},
		{in: "hf.co/../tiny", err: true},
		{in: "hf.co/acme/tiny:Q4 K", err: true},
		{in: "model.gguf", err: true},
	}
	for _, c := range cases {
		got, err := ParseRef(c.in)
		if (err != nil) != c.err || (!c.err && got != c.want) {
			t.Errorf("ParseRef(%q) = %+v, %v; want %+v, error %v", c.in, got, err, c.want, c.err)
		}
	}
}

func TestPick(t *testing.T) {
	files := []string{"README.md", "tiny.Q4_K_M.gguf", "tiny.Q4_K.gguf", "tiny-Q8_0.gguf", "mmproj-tiny-Q8_0.gguf", "big-Q2_K-00001-of-00002.gguf"}
	cases := []struct {
		tag, want string
		err       string
	}{
		{"", "tiny.Q4_K_M.gguf", ""},
		{"q4_k_m", "tiny.Q4_K_M.gguf", ""},
		{"Q4_K", "tiny.Q4_K.gguf", ""},
		{"Q8_0", "tiny-Q8_0.gguf", ""},
		{"Q2_K", "", "split"},
		{"F16", "", "no .gguf file for tag F16"},
	}
	for _, c := range cases {
		got, err := pick(Ref{Owner: "a", Repo: "b", Tag: c.tag}, files)
		if got != c.want || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("tag %q: %q, %v; want %q, error containing %q", c.tag, got, err, c.want, c.err)
		}
	}
	if got, err := pick(Ref{Owner: "a", Repo: "b"}, []string{"only-F16.gguf"}); got != "only-F16.gguf" || err != nil {
		t.Errorf("single file without tag: %q, %v", got, err)
	}
}

func TestPullResolvesVerifiesAndReuses(t *testing.T) {
	h := &fakeHub{files: map[string][]byte{"tiny.Q4_K_M.gguf": model(t), "tiny.Q8_0.gguf": model(t)[:200]}, pages: 2}
	c, verified := newTestClient(t, h)
	r, _ := ParseRef("hf.co/acme/tiny-GGUF")
	p, err := c.Pull(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(c.Dir, "acme", "tiny-GGUF", "tiny.Q4_K_M.gguf"); p != want {
		t.Errorf("path %s, want %s", p, want)
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, model(t)) {
		t.Error("pulled content differs")
	}
	if len(*verified) != 1 || !strings.HasSuffix((*verified)[0], ".part") {
		t.Errorf("Verify must run once, on the file before it takes its name: %v", *verified)
	}
	// Second use: no network at all.
	h.mu.Lock()
	h.files = nil
	h.mu.Unlock()
	if p2, err := c.Pull(context.Background(), r); err != nil || p2 != p {
		t.Errorf("second pull: %s, %v; want the local file without the network", p2, err)
	}
	es, err := c.Entries()
	if err != nil || len(es) != 1 || es[0].Ref != "hf.co/acme/tiny-GGUF/tiny.Q4_K_M.gguf" || es[0].Size != int64(len(model(t))) {
		t.Errorf("Entries: %+v, %v", es, err)
	}
	if _, err := c.Remove(r); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(c.Dir, "acme")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("rm leaves empty directories: %v", err)
	}
	if _, err := c.Remove(r); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("second rm: %v", err)
	}
}

func TestPullResumesInterruptedDownload(t *testing.T) {
	b := model(t)
	h := &fakeHub{files: map[string][]byte{"tiny.Q4_K_M.gguf": b}, cutAt: len(b) / 3}
	c, _ := newTestClient(t, h)
	r, _ := ParseRef("hf.co/acme/tiny-GGUF:Q4_K_M")
	_, err := c.Pull(context.Background(), r)
	if err == nil || !strings.Contains(err.Error(), "resume") {
		t.Fatalf("dropped connection: %v", err)
	}
	part := c.LocalPath(r, "tiny.Q4_K_M.gguf") + ".part"
	if st, err := os.Stat(part); err != nil || st.Size() != int64(len(b)/3) {
		t.Fatalf("partial file: %v %v", st, err)
	}
	p, err := c.Pull(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, b) {
		t.Error("resumed content differs")
	}
	if want := fmt.Sprintf("bytes=%d-", len(b)/3); len(h.ranges) != 2 || h.ranges[0] != "" || h.ranges[1] != want {
		t.Errorf("content requests' Range headers %q, want none then %q", h.ranges, want)
	}
	if _, err := os.Stat(part); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf(".part left behind: %v", err)
	}
}

func TestPullRefusesWrongChecksum(t *testing.T) {
	b := model(t)
	// The listing and the resolve headers disagree with the content: the
	// listing's sha256 is of other bytes (X-Linked-Etag is the content's,
	// so the header check catches it before any download)...
	h := &fakeHub{files: map[string][]byte{"tiny.Q4_K_M.gguf": b}, sums: map[string]string{"tiny.Q4_K_M.gguf": strings.Repeat("ab", 32)}}
	c, verified := newTestClient(t, h)
	r, _ := ParseRef("hf.co/acme/tiny-GGUF")
	if _, err := c.Pull(context.Background(), r); err == nil || !strings.Contains(err.Error(), "X-Linked-Etag") {
		t.Errorf("mismatched etag: %v", err)
	}
	// ...and when the served bytes are corrupted in transit, the hash
	// check refuses the file and deletes it.
	h2 := &fakeHub{files: map[string][]byte{"tiny.Q4_K_M.gguf": b}}
	c2, verified2 := newTestClient(t, h2)
	h2.mu.Lock()
	sum := sha256.Sum256(b)
	h2.sums = map[string]string{"tiny.Q4_K_M.gguf": hex.EncodeToString(sum[:])}
	bad := append([]byte(nil), b...)
	bad[len(bad)/2] ^= 1
	h2.files["tiny.Q4_K_M.gguf"] = bad
	h2.mu.Unlock()
	// The listing now carries the original sum; the resolve headers
	// describe the corrupted bytes, so drop them to reach the hash check.
	c2.HTTP = &http.Client{Transport: stripHeaders{http.DefaultTransport}}
	_, err := c2.Pull(context.Background(), r)
	if !errors.Is(err, ErrChecksum) {
		t.Fatalf("corrupted content: %v, want ErrChecksum", err)
	}
	if len(*verified)+len(*verified2) != 0 {
		t.Error("Verify ran on a file that failed its checksum")
	}
	if es, _ := c2.Entries(); len(es) != 0 {
		t.Errorf("a file that failed its checksum is listed: %+v", es)
	}
	if _, err := os.Stat(c2.LocalPath(r, "tiny.Q4_K_M.gguf") + ".part"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("corrupted .part kept: %v", err)
	}
}

type stripHeaders struct{ rt http.RoundTripper }

func (s stripHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.rt.RoundTrip(r)
	if resp != nil {
		resp.Header.Del("X-Linked-Etag")
		resp.Header.Del("X-Linked-Size")
	}
	return resp, err
}

func TestPullRefusesWhatVerifyRejects(t *testing.T) {
	h := &fakeHub{files: map[string][]byte{"tiny.Q4_K_M.gguf": []byte("not a gguf file at all")}}
	c, _ := newTestClient(t, h)
	r, _ := ParseRef("hf.co/acme/tiny-GGUF")
	_, err := c.Pull(context.Background(), r)
	if err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("hostile file: %v", err)
	}
	if es, _ := c.Entries(); len(es) != 0 {
		t.Errorf("a refused file is listed: %+v", es)
	}
	if _, err := c.Local(r); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused file is usable: %v", err)
	}
}

func TestPullErrors(t *testing.T) {
	h := &fakeHub{files: map[string][]byte{"tiny.Q8_0.gguf": model(t), "tiny.F16.gguf": model(t)}}
	c, _ := newTestClient(t, h)
	for ref, want := range map[string]string{
		"hf.co/acme/nope":                    "HTTP 404",
		"hf.co/acme/tiny-GGUF":               "no .gguf file for tag Q4_K_M; files: tiny.F16.gguf, tiny.Q8_0.gguf",
		"hf.co/acme/tiny-GGUF/other.gguf":    `no file "other.gguf"`,
		"hf.co/acme/tiny-GGUF:IQ4_XS":        "no .gguf file for tag IQ4_XS",
		"hf.co/acme/tiny-GGUF/tiny.F16.gguf": "",
	} {
		r, err := ParseRef(ref)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Pull(context.Background(), r)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want error containing %q", ref, err, want)
		}
	}
}

// Whatever a user types or a listing names, a reference that parses maps
// inside the model directory, and the Link parser never panics.
func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"hf.co/acme/tiny-GGUF", "hf.co/a/b:Q4_K_M", "huggingface.co/a/b/c/d.gguf", "hf.co/a/b/../x.gguf", "hf.co/a/b/.x.gguf"} {
		f.Add(s, `<https://huggingface.co/api/models/a/b/tree/main?cursor=x>; rel="next"`)
	}
	f.Fuzz(func(t *testing.T, s, link string) {
		nextLink(link, "https://huggingface.co/api/models/a/b/tree/main")
		rangeStart(link)
		r, err := ParseRef(s)
		if err != nil {
			return
		}
		c := &Client{Dir: "/models"}
		file := r.File
		if file == "" {
			file = "x.gguf"
		}
		p := c.LocalPath(r, file)
		if rel, err := filepath.Rel(c.Dir, p); err != nil || strings.HasPrefix(rel, "..") || filepath.IsAbs(rel) {
			t.Fatalf("%q maps to %s, outside %s", s, p, c.Dir)
		}
		if back, err := ParseRef(r.String()); err != nil || back != r {
			t.Fatalf("%q: String() %q parses to %+v, %v", s, r.String(), back, err)
		}
	})
}

// A second pull of a file being downloaded is refused instead of
// appending to the same .part.
func TestPullRefusesConcurrentDownload(t *testing.T) {
	h := &fakeHub{files: map[string][]byte{"tiny.Q4_K_M.gguf": model(t)}}
	c, _ := newTestClient(t, h)
	r, _ := ParseRef("hf.co/acme/tiny-GGUF")
	part := c.LocalPath(r, "tiny.Q4_K_M.gguf") + ".part"
	if err := os.MkdirAll(filepath.Dir(part), 0o755); err != nil {
		t.Fatal(err)
	}
	fh, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := lockFile(fh); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Pull(context.Background(), r); !errors.Is(err, ErrBusy) {
		t.Errorf("pull during another download: %v, want ErrBusy", err)
	}
	fh.Close() // releases the lock
	if _, err := c.Pull(context.Background(), r); err != nil {
		t.Errorf("pull after the other download ended: %v", err)
	}
}
