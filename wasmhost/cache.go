package wasmhost

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The on-disk compilation cache lives in <root>/<guest key>/ where the key is
// a prefix of the guest's SHA-256, so a different guest binary (a new build of
// memvanta) starts from an empty directory and never sees another guest's
// machine code. wazero itself further separates entries by its version, the
// OS/arch and the CPU features.
//
// wazero checksums the machine code in its cache files but not the framing
// around it: a corrupt count at the head (function offsets) or the tail
// (exception tables) would size an allocation from garbage. So after every
// fresh compile we record, per file wazero wrote, its size and the CRC-32C of
// its first and last checkedSpan bytes in a manifest, and before using the
// directory we check every file against it; any difference (or no manifest)
// wipes the directory and the guest is compiled afresh. The middle of a large
// entry is left to wazero's own checksum (a mismatch there is a compile
// error, which also wipes and retries), so a warm start reads the code once,
// not twice.

const manifestName = "memvanta-cache-manifest.json"

// checkedSpan is how much of each end of a cache file the manifest covers.
const checkedSpan = 1 << 20

// staleAge is how old another guest's cache directory must be before it is
// pruned; a younger one may belong to a different memvanta running now.
const staleAge = time.Hour

type manifestEntry struct {
	Path   string `json:"path"` // slash-separated, relative to the cache dir
	Size   int64  `json:"size"`
	CRC32C uint32 `json:"crc32c"` // of the first and last checkedSpan bytes
}

type manifest struct {
	Guest string          `json:"guest"` // full hex SHA-256 of the guest
	Files []manifestEntry `json:"files"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// DefaultCacheRoot is os.UserCacheDir()/memvanta/wazero.
func DefaultCacheRoot() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("locating the user cache directory: %w", err)
	}
	return filepath.Join(d, "memvanta", "wazero"), nil
}

// cacheDirFor is the directory for the guest with hex digest sum under root.
func cacheDirFor(root, sum string) string { return filepath.Join(root, sum[:16]) }

// scanCache lists the regular files under dir except the manifest.
func scanCache(dir string) ([]manifestEntry, error) {
	var out []manifestEntry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == manifestName || strings.HasSuffix(rel, ".tmp") {
			return nil
		}
		e, err := checksumFile(p)
		if err != nil {
			return err
		}
		e.Path = rel
		out = append(out, e)
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, err
}

func checksumFile(p string) (manifestEntry, error) {
	f, err := os.Open(p)
	if err != nil {
		return manifestEntry{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return manifestEntry{}, err
	}
	size := st.Size()
	h := crc32.New(castagnoli)
	head := min(size, checkedSpan)
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, head)); err != nil {
		return manifestEntry{}, fmt.Errorf("reading cache file %s: %w", p, err)
	}
	if tailStart := max(head, size-checkedSpan); tailStart < size {
		if _, err := io.Copy(h, io.NewSectionReader(f, tailStart, size-tailStart)); err != nil {
			return manifestEntry{}, fmt.Errorf("reading cache file %s: %w", p, err)
		}
	}
	return manifestEntry{Size: size, CRC32C: h.Sum32()}, nil
}

// cacheIntact reports whether dir holds exactly the files its manifest lists,
// byte for byte, for the guest with digest sum.
func cacheIntact(dir, sum string) bool {
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		return false
	}
	var m manifest
	if json.Unmarshal(b, &m) != nil || m.Guest != sum || len(m.Files) == 0 {
		return false
	}
	have, err := scanCache(dir)
	if err != nil || len(have) != len(m.Files) {
		return false
	}
	for i := range have {
		if have[i] != m.Files[i] {
			return false
		}
	}
	return true
}

// writeManifest records the files now in dir. It writes to a temporary file
// and renames, so a crash never leaves a half-written manifest that passes.
func writeManifest(dir, sum string) error {
	files, err := scanCache(dir)
	if err != nil {
		return fmt.Errorf("scanning compilation cache %s: %w", dir, err)
	}
	if len(files) == 0 {
		return fmt.Errorf("compilation cache %s: wazero wrote no entry", dir)
	}
	b, err := json.Marshal(manifest{Guest: sum, Files: files})
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, manifestName+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing cache manifest: %w", err)
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing cache manifest: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, manifestName)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing cache manifest: %w", err)
	}
	return nil
}

// pruneStale removes the cache directories under root not named in keep
// (those of the guests this binary embeds) that have not been touched for
// staleAge: a directory is written once and then only read, so its age is
// that of the guest build that made it. Errors are ignored: pruning is
// housekeeping.
func pruneStale(root string, keep map[string]bool, now time.Time) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || keep[e.Name()] || !isHexKey(e.Name()) {
			continue
		}
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) < staleAge {
			continue
		}
		os.RemoveAll(filepath.Join(root, e.Name()))
	}
}

func isHexKey(s string) bool {
	if len(s) != 16 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
