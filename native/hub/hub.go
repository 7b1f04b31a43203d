// Package hub pulls GGUF models from the Hugging Face Hub into a local
// model directory: `memvanta pull hf.co/OWNER/REPO[:QUANT|/FILE.gguf]` and
// `-m hf.co/...` on first use.
//
// It speaks the Hub's public HTTP API as huggingface_hub does:
//
//   - GET {endpoint}/api/models/{repo}/tree/{rev}?recursive=true lists the
//     files (paged by a Link: <…>; rel="next" header); each GGUF file is an
//     LFS object whose lfs.oid is the sha256 of its content;
//   - GET {endpoint}/{repo}/resolve/{rev}/{file} redirects to the content,
//     and answers HTTP Range requests; its X-Linked-Etag (the sha256) and
//     X-Linked-Size headers are checked against the listing when present.
//
// HF_ENDPOINT overrides the endpoint (as in huggingface_hub; the tests
// point it at a local server) and HF_TOKEN is sent as a bearer token.
//
// A :QUANT tag is resolved as llama.cpp's -hf and ollama's hf.co/ names
// do: the repository's .gguf file whose name carries the tag (case
// insensitive, e.g. model-Q4_K_M.gguf); no tag means Q4_K_M, or the only
// GGUF file when there is one. Multimodal projector files (mmproj) are
// never picked. Split files (-00001-of-00003.gguf) are refused.
//
// A download goes to FILE.part and resumes from it (Range: bytes=N-). The
// file is moved to its final name only after its sha256 matches the Hub's
// and the caller's Verify (the sandboxed inspect) accepts it, so a file in
// the model directory is always a verified one, and `-m hf.co/...` uses it
// without asking the network again.
package hub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DefaultEndpoint is the Hub's base URL when HF_ENDPOINT is not set.
const DefaultEndpoint = "https://huggingface.co"

// DefaultTag is the quantisation picked when a reference names none, as
// llama.cpp's -hf and ollama do.
const DefaultTag = "Q4_K_M"

// maxListing bounds a tree listing page (the Hub's are a few KB per 100
// files), and maxFiles the files kept from a whole listing.
const (
	maxListing = 32 << 20
	maxFiles   = 100000
)

// Ref is a parsed model reference.
type Ref struct {
	Owner, Repo string
	Tag         string // quantisation tag (":Q4_K_M"), "" if none
	File        string // path of the file in the repository, "" if by tag
}

// Repo path "owner/repo".
func (r Ref) RepoID() string { return r.Owner + "/" + r.Repo }

func (r Ref) String() string {
	s := "hf.co/" + r.RepoID()
	if r.File != "" {
		return s + "/" + r.File
	}
	if r.Tag != "" {
		return s + ":" + r.Tag
	}
	return s
}

var (
	nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$`)
	tagRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
)

// IsRef reports whether s names a Hub model rather than a local file.
func IsRef(s string) bool {
	return strings.HasPrefix(s, "hf.co/") || strings.HasPrefix(s, "huggingface.co/")
}

// ParseRef reads hf.co/OWNER/REPO, hf.co/OWNER/REPO:QUANT or
// hf.co/OWNER/REPO/PATH/FILE.gguf (huggingface.co/ works too).
func ParseRef(s string) (Ref, error) {
	rest, ok := strings.CutPrefix(s, "hf.co/")
	if !ok {
		if rest, ok = strings.CutPrefix(s, "huggingface.co/"); !ok {
			return Ref{}, fmt.Errorf("hub: %q: want hf.co/OWNER/REPO[:QUANT|/FILE.gguf]", s)
		}
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 2 {
		return Ref{}, fmt.Errorf("hub: %q: want hf.co/OWNER/REPO[:QUANT|/FILE.gguf]", s)
	}
	r := Ref{Owner: parts[0], Repo: parts[1]}
	if len(parts) == 3 {
		r.File = parts[2]
		if err := checkFilePath(r.File); err != nil {
			return Ref{}, fmt.Errorf("hub: %q: %w", s, err)
		}
		if !strings.HasSuffix(strings.ToLower(r.File), ".gguf") {
			return Ref{}, fmt.Errorf("hub: %q: the file must be a .gguf file", s)
		}
	} else if repo, tag, ok := strings.Cut(r.Repo, ":"); ok {
		r.Repo, r.Tag = repo, tag
		if !tagRE.MatchString(tag) {
			return Ref{}, fmt.Errorf("hub: %q: bad quantisation tag %q", s, tag)
		}
		if strings.EqualFold(tag, "latest") {
			r.Tag = ""
		}
	}
	if !nameRE.MatchString(r.Owner) || !nameRE.MatchString(r.Repo) {
		return Ref{}, fmt.Errorf("hub: %q: owner and repository names are letters, digits, '.', '_' and '-'", s)
	}
	return r, nil
}

// checkFilePath refuses repository paths that could leave the model
// directory or are not plain relative paths.
func checkFilePath(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\\\x00:") || path.Clean(p) != p {
		return fmt.Errorf("bad file path %q", p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.HasPrefix(seg, ".") {
			return fmt.Errorf("bad file path %q", p)
		}
	}
	return nil
}

// DefaultDir is the model directory: $MEMVANTA_MODELS, else
// $XDG_CACHE_HOME/memvanta/models, else ~/.cache/memvanta/models.
func DefaultDir() (string, error) {
	if d := os.Getenv("MEMVANTA_MODELS"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "memvanta", "models"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("hub: no model directory: set MEMVANTA_MODELS or XDG_CACHE_HOME (%w)", err)
	}
	return filepath.Join(home, ".cache", "memvanta", "models"), nil
}

// Client pulls from one endpoint into one directory.
type Client struct {
	Endpoint string       // base URL, no trailing slash
	Token    string       // bearer token, "" for none
	Dir      string       // model directory
	HTTP     *http.Client // nil: a client with connection and header timeouts
	// Verify is run on a downloaded file whose checksum matched, before it
	// takes its final name (memvanta passes the sandboxed inspect). A
	// non-nil error refuses the file.
	Verify func(ctx context.Context, path string) error
	// Progress, when set, gets a progress line (rewritten with \r).
	Progress io.Writer
}

// NewClient returns a client for dir using HF_ENDPOINT and HF_TOKEN.
func NewClient(dir string) *Client {
	ep := os.Getenv("HF_ENDPOINT")
	if ep == "" {
		ep = DefaultEndpoint
	}
	return &Client{Endpoint: strings.TrimRight(ep, "/"), Token: os.Getenv("HF_TOKEN"), Dir: dir}
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 60 * time.Second
	return &http.Client{Transport: t}
}

// Remote is a file of a repository as the tree listing describes it.
type Remote struct {
	Path   string
	Size   int64
	SHA256 string // lowercase hex; "" for a non-LFS file (then GitSHA1 is set)
	GitSHA string // the git blob id (sha1 of "blob N\0" + content)
}

type treeEntry struct {
	Type string `json:"type"`
	Oid  string `json:"oid"`
	Size int64  `json:"size"`
	Path string `json:"path"`
	LFS  *struct {
		Oid  string `json:"oid"`
		Size int64  `json:"size"`
	} `json:"lfs"`
}

// List returns the repository's files (revision main).
func (c *Client) List(ctx context.Context, owner, repo string) ([]Remote, error) {
	next := fmt.Sprintf("%s/api/models/%s/%s/tree/main?recursive=true", c.Endpoint, url.PathEscape(owner), url.PathEscape(repo))
	var out []Remote
	for pages := 0; next != ""; pages++ {
		if pages > 1000 {
			return nil, fmt.Errorf("hub: %s/%s: file listing has more than 1000 pages", owner, repo)
		}
		resp, err := c.get(ctx, next, nil)
		if err != nil {
			return nil, err
		}
		var entries []treeEntry
		err = json.NewDecoder(io.LimitReader(resp.Body, maxListing)).Decode(&entries)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("hub: %s/%s: reading the file listing: %w", owner, repo, err)
		}
		for _, e := range entries {
			if e.Type != "file" {
				continue
			}
			r := Remote{Path: e.Path, Size: e.Size, GitSHA: strings.ToLower(e.Oid)}
			if e.LFS != nil {
				r.SHA256, r.Size = strings.ToLower(e.LFS.Oid), e.LFS.Size
			}
			out = append(out, r)
		}
		if len(out) > maxFiles {
			return nil, fmt.Errorf("hub: %s/%s: the repository lists more than %d files", owner, repo, maxFiles)
		}
		next = nextLink(resp.Header.Get("Link"), next)
	}
	return out, nil
}

// nextLink reads an RFC 8288 Link header's rel="next" target, resolved
// against base.
func nextLink(h, base string) string {
	for _, part := range strings.Split(h, ",") {
		seg := strings.Split(part, ";")
		if len(seg) < 2 {
			continue
		}
		target := strings.Trim(strings.TrimSpace(seg[0]), "<>")
		for _, p := range seg[1:] {
			if strings.ReplaceAll(strings.TrimSpace(p), " ", "") == `rel="next"` {
				b, err1 := url.Parse(base)
				u, err2 := url.Parse(target)
				if err1 != nil || err2 != nil {
					return ""
				}
				return b.ResolveReference(u).String()
			}
		}
	}
	return ""
}

// HTTPError is a non-success answer from the Hub.
type HTTPError struct {
	URL    string
	Status int
	Body   string
}

func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("hub: GET %s: HTTP %d", e.URL, e.Status)
	switch e.Status {
	case http.StatusUnauthorized, http.StatusForbidden:
		msg += " (private or gated repository: set HF_TOKEN)"
	case http.StatusNotFound:
		msg += " (no such repository or file)"
	}
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

func (c *Client) get(ctx context.Context, u string, hdr http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", "memvanta")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, &HTTPError{URL: u, Status: resp.StatusCode, Body: strings.TrimSpace(string(b))}
	}
	return resp, nil
}

var splitRE = regexp.MustCompile(`(?i)-\d{5}-of-\d{5}\.gguf$`)

// nameHasTag reports whether a GGUF file name carries tag ("Q4_K_M" in
// "tinyllama-1.1b.Q4_K_M.gguf"), case-insensitively, as a whole part of
// the name: Q4_K does not match Q4_K_M.
func nameHasTag(name, tag string) bool {
	base := strings.ToUpper(path.Base(name))
	base = strings.TrimSuffix(base, ".GGUF")
	tag = strings.ToUpper(tag)
	for i := 0; ; {
		j := strings.Index(base[i:], tag)
		if j < 0 {
			return false
		}
		s, e := i+j, i+j+len(tag)
		okStart := s == 0 || strings.ContainsRune("-._ ", rune(base[s-1]))
		okEnd := e == len(base) || strings.ContainsRune("-. ", rune(base[e]))
		if okStart && okEnd {
			return true
		}
		i = s + 1
	}
}

func isModelGGUF(p string) bool {
	l := strings.ToLower(path.Base(p))
	return strings.HasSuffix(l, ".gguf") && !strings.Contains(l, "mmproj")
}

// pick chooses the file a reference names among files (repository paths).
func pick(r Ref, files []string) (string, error) {
	if r.File != "" {
		for _, f := range files {
			if f == r.File {
				return f, nil
			}
		}
		return "", fmt.Errorf("hub: %s: no file %q in the repository", r.RepoID(), r.File)
	}
	var ggufs []string
	for _, f := range files {
		if isModelGGUF(f) {
			ggufs = append(ggufs, f)
		}
	}
	sort.Strings(ggufs)
	if len(ggufs) == 0 {
		return "", fmt.Errorf("hub: %s: the repository has no .gguf file", r.RepoID())
	}
	tag := r.Tag
	if tag == "" {
		tag = DefaultTag
	}
	var match []string
	for _, f := range ggufs {
		if nameHasTag(f, tag) {
			match = append(match, f)
		}
	}
	if len(match) == 0 && r.Tag == "" && len(ggufs) == 1 {
		match = ggufs
	}
	switch {
	case len(match) == 0:
		return "", fmt.Errorf("hub: %s: no .gguf file for tag %s; files: %s", r.RepoID(), tag, strings.Join(ggufs, ", "))
	case splitRE.MatchString(match[0]):
		return "", fmt.Errorf("hub: %s: %s is split into several files, which memvanta does not load yet", r.RepoID(), match[0])
	case len(match) > 1:
		return "", fmt.Errorf("hub: %s: tag %s matches %d files (%s): name one with hf.co/%s/FILE.gguf",
			r.RepoID(), tag, len(match), strings.Join(match, ", "), r.RepoID())
	}
	return match[0], nil
}

// LocalPath is where a pulled repository file lives in the model directory.
func (c *Client) LocalPath(r Ref, file string) string {
	return filepath.Join(c.Dir, r.Owner, r.Repo, filepath.FromSlash(file))
}

// Local returns the verified local file a reference names, without the
// network, or an fs.ErrNotExist error when it has not been pulled.
func (c *Client) Local(r Ref) (string, error) {
	if r.File != "" {
		p := c.LocalPath(r, r.File)
		if _, err := os.Stat(p); err != nil {
			return "", err
		}
		return p, nil
	}
	// A tag was resolved against the Hub's listing when it was pulled;
	// the answer is kept beside the files (another quantisation pulled by
	// name must not stand in for it).
	tags, err := c.readTags(r)
	if err != nil {
		return "", err
	}
	f, ok := tags[strings.ToUpper(r.Tag)]
	if !ok {
		return "", fmt.Errorf("%s: %w", r, fs.ErrNotExist)
	}
	p := c.LocalPath(r, f)
	if _, err := os.Stat(p); err != nil {
		return "", err
	}
	return p, nil
}

// tagsFile maps the tags pulled from a repository to its file names.
const tagsFile = ".memvanta-tags.json"

func (c *Client) readTags(r Ref) (map[string]string, error) {
	b, err := os.ReadFile(filepath.Join(c.Dir, r.Owner, r.Repo, tagsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	if len(b) > 1<<20 || json.Unmarshal(b, &m) != nil {
		return nil, fmt.Errorf("hub: %s is corrupt: delete it", filepath.Join(c.Dir, r.Owner, r.Repo, tagsFile))
	}
	for k, v := range m {
		if checkFilePath(v) != nil {
			delete(m, k)
		}
	}
	return m, nil
}

func (c *Client) writeTag(r Ref, file string) error {
	m, err := c.readTags(r)
	if err != nil {
		return err
	}
	m[strings.ToUpper(r.Tag)] = file
	b, _ := json.MarshalIndent(m, "", "  ")
	p := filepath.Join(c.Dir, r.Owner, r.Repo, tagsFile)
	if err := os.WriteFile(p+".tmp", b, 0o644); err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	return os.Rename(p+".tmp", p)
}

// Pull makes the file a reference names available locally and returns
// its path: an already pulled file is used as is; otherwise it is
// resolved, downloaded (resuming a .part file), checked against the
// Hub's sha256 and Verify, and only then given its final name.
func (c *Client) Pull(ctx context.Context, r Ref) (string, error) {
	if p, err := c.Local(r); err == nil {
		return p, nil
	}
	files, err := c.List(ctx, r.Owner, r.Repo)
	if err != nil {
		return "", err
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Path
	}
	name, err := pick(r, names)
	if err != nil {
		return "", err
	}
	if err := checkFilePath(name); err != nil {
		return "", fmt.Errorf("hub: %s: %w", r.RepoID(), err)
	}
	var rem Remote
	for _, f := range files {
		if f.Path == name {
			rem = f
		}
	}
	if rem.Size < 0 || (rem.SHA256 == "" && rem.GitSHA == "") {
		return "", fmt.Errorf("hub: %s/%s: the listing gives no size or checksum", r.RepoID(), name)
	}
	dst := c.LocalPath(r, name)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", fmt.Errorf("hub: %w", err)
	}
	part := dst + ".part"
	if err := c.download(ctx, r, rem, part); err != nil {
		return "", err
	}
	if c.Verify != nil {
		if err := c.Verify(ctx, part); err != nil {
			if ctx.Err() == nil {
				os.Remove(part)
			}
			return "", fmt.Errorf("hub: refusing %s/%s: %w", r.RepoID(), name, err)
		}
	}
	if err := os.Rename(part, dst); err != nil {
		return "", fmt.Errorf("hub: %w", replaceError(err, dst, part))
	}
	if r.File == "" {
		if err := c.writeTag(r, name); err != nil {
			return "", err
		}
	}
	return dst, nil
}

// ErrBusy is returned when another process is downloading the same file.
var ErrBusy = errors.New("download in progress")

// ErrChecksum is returned when the downloaded bytes do not hash to the
// Hub's checksum (the partial file is deleted).
var ErrChecksum = errors.New("checksum mismatch")

// download fetches rem into part, resuming from part's current size, and
// checks the size and checksum.
func (c *Client) download(ctx context.Context, r Ref, rem Remote, part string) error {
	fh, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	defer fh.Close()
	// One download of a file at a time: a second pull would append to the
	// same .part. The lock goes with the descriptor.
	if err := lockFile(fh); err != nil {
		return fmt.Errorf("hub: %s is being downloaded by another process (%w)", part, ErrBusy)
	}
	var h hash.Hash = sha256.New()
	want := rem.SHA256
	if want == "" {
		h = sha1.New()
		fmt.Fprintf(h, "blob %d\x00", rem.Size)
		want = rem.GitSHA
	}
	have, err := io.Copy(h, fh) // hash what a previous attempt kept
	if err != nil {
		return fmt.Errorf("hub: reading %s: %w", part, err)
	}
	if have > rem.Size {
		if err := restart(fh, &h, rem); err != nil {
			return err
		}
		have = 0
	}
	u := fmt.Sprintf("%s/%s/%s/resolve/main/%s", c.Endpoint, url.PathEscape(r.Owner), url.PathEscape(r.Repo), escapePath(rem.Path))
	if have < rem.Size {
		hdr := http.Header{}
		if have > 0 {
			hdr.Set("Range", fmt.Sprintf("bytes=%d-", have))
		}
		resp, err := c.get(ctx, u, hdr)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if err := checkHeaders(resp, rem); err != nil {
			return err
		}
		switch {
		case have > 0 && resp.StatusCode == http.StatusPartialContent:
			if start := rangeStart(resp.Header.Get("Content-Range")); start != have {
				return fmt.Errorf("hub: %s: asked for bytes from %d, got Content-Range %q", u, have, resp.Header.Get("Content-Range"))
			}
		case resp.StatusCode == http.StatusOK:
			if have > 0 { // no range support: start over
				if err := restart(fh, &h, rem); err != nil {
					return err
				}
				have = 0
			}
		default:
			return fmt.Errorf("hub: %s: unexpected HTTP %d", u, resp.StatusCode)
		}
		pw := &progress{w: c.Progress, name: r.RepoID() + "/" + rem.Path, total: rem.Size, done: have, start: time.Now(), base: have}
		n, err := io.Copy(io.MultiWriter(fh, h, pw), io.LimitReader(resp.Body, rem.Size-have+1))
		pw.finish()
		have += n
		if err != nil {
			return fmt.Errorf("hub: downloading %s: %w (%d of %d bytes kept in %s; pull again to resume)", rem.Path, err, have, rem.Size, part)
		}
		if have < rem.Size {
			return fmt.Errorf("hub: downloading %s: connection ended at byte %d of %d (kept in %s; pull again to resume)", rem.Path, have, rem.Size, part)
		}
	}
	if have != rem.Size {
		discard(fh, part)
		return fmt.Errorf("hub: %s: got %d bytes, the Hub lists %d", rem.Path, have, rem.Size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		discard(fh, part)
		return fmt.Errorf("hub: %s: %w: content hashes to %s, the Hub lists %s", rem.Path, ErrChecksum, got, want)
	}
	return fh.Sync()
}

// discard deletes a .part whose bytes are wrong, closing it first: Windows
// refuses to delete a file that is open without FILE_SHARE_DELETE (Go opens
// files without it), so removing it while fh is open would keep the bad
// bytes and every later pull would fail on them again. The deferred Close
// of fh then fails harmlessly.
func discard(fh *os.File, part string) {
	fh.Close()
	os.Remove(part)
}

func restart(fh *os.File, h *hash.Hash, rem Remote) error {
	if err := fh.Truncate(0); err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	if _, err := fh.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	if rem.SHA256 != "" {
		*h = sha256.New()
	} else {
		*h = sha1.New()
		fmt.Fprintf(*h, "blob %d\x00", rem.Size)
	}
	return nil
}

// checkHeaders compares the resolve answer's X-Linked-Etag / X-Linked-Size
// (set by the Hub on its redirect to the content for LFS files) with the
// listing, on the final response and every redirect before it.
func checkHeaders(resp *http.Response, rem Remote) error {
	for r := resp; r != nil; {
		if err := checkLinked(r, rem); err != nil {
			return err
		}
		if r.Request == nil {
			break
		}
		r = r.Request.Response
	}
	return nil
}

func checkLinked(resp *http.Response, rem Remote) error {
	if e := strings.Trim(resp.Header.Get("X-Linked-Etag"), `"`); e != "" && rem.SHA256 != "" {
		e = strings.TrimPrefix(e, "W/")
		if strings.Trim(e, `"`) != rem.SHA256 {
			return fmt.Errorf("hub: %s: X-Linked-Etag %s differs from the listing's sha256 %s (file changed during the pull?)", rem.Path, e, rem.SHA256)
		}
	}
	if s := resp.Header.Get("X-Linked-Size"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n != rem.Size {
			return fmt.Errorf("hub: %s: X-Linked-Size %d differs from the listing's size %d", rem.Path, n, rem.Size)
		}
	}
	return nil
}

// rangeStart reads the first byte position of "bytes START-END/TOTAL".
func rangeStart(cr string) int64 {
	s, ok := strings.CutPrefix(cr, "bytes ")
	if !ok {
		return -1
	}
	a, _, ok := strings.Cut(s, "-")
	if !ok {
		return -1
	}
	n, err := strconv.ParseInt(a, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// progress writes a rewritten progress line at most every 250 ms.
type progress struct {
	w                 io.Writer
	name              string
	total, done, base int64
	start, last       time.Time
}

func (p *progress) Write(b []byte) (int, error) {
	p.done += int64(len(b))
	if p.w != nil && time.Since(p.last) >= 250*time.Millisecond {
		p.last = time.Now()
		p.print()
	}
	return len(b), nil
}

func (p *progress) print() {
	pct := 100.0
	if p.total > 0 {
		pct = float64(p.done) * 100 / float64(p.total)
	}
	rate := 0.0
	if s := time.Since(p.start).Seconds(); s > 0 {
		rate = float64(p.done-p.base) / s / (1 << 20)
	}
	fmt.Fprintf(p.w, "\rpull: %s %5.1f%% %.1f / %.1f MiB %.1f MiB/s ", p.name, pct, float64(p.done)/(1<<20), float64(p.total)/(1<<20), rate)
}

func (p *progress) finish() {
	if p.w != nil {
		p.print()
		fmt.Fprintln(p.w)
	}
}

// Entry is one pulled file.
type Entry struct {
	Ref  string `json:"ref"` // hf.co/OWNER/REPO/FILE
	Path string `json:"path"`
	Size int64  `json:"size_bytes"`
}

// Entries lists the pulled files (complete, verified ones only).
func (c *Client) Entries() ([]Entry, error) {
	var out []Entry
	err := filepath.WalkDir(c.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == c.Dir {
				return fs.SkipAll
			}
			return err
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(strings.ToLower(p), ".gguf") {
			return nil
		}
		rel, err := filepath.Rel(c.Dir, p)
		if err != nil {
			return err
		}
		parts := strings.SplitN(filepath.ToSlash(rel), "/", 3)
		if len(parts) != 3 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, Entry{Ref: "hf.co/" + strings.Join(parts, "/"), Path: p, Size: info.Size()})
		return nil
	})
	return out, err
}

// Remove deletes the pulled file a reference names (and its .part), and
// the repository directories left empty.
func (c *Client) Remove(r Ref) (string, error) {
	p, err := c.Local(r)
	if err != nil {
		return "", err
	}
	if err := os.Remove(p); err != nil {
		return "", err
	}
	os.Remove(p + ".part")
	if tags, err := c.readTags(r); err == nil && len(tags) > 0 {
		for k, v := range tags {
			if c.LocalPath(r, v) == p {
				delete(tags, k)
			}
		}
		tp := filepath.Join(c.Dir, r.Owner, r.Repo, tagsFile)
		if len(tags) == 0 {
			os.Remove(tp)
		} else if b, err := json.MarshalIndent(tags, "", "  "); err == nil {
			os.WriteFile(tp, b, 0o644)
		}
	}
	for d := filepath.Dir(p); d != c.Dir && strings.HasPrefix(d, c.Dir); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			break
		}
	}
	return p, nil
}
