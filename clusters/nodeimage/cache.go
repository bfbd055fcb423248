package nodeimage

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// schema is bumped whenever the way an artifact is produced changes, so old
// cache entries are not reused for a new recipe.
const schema = "ndfq-nodeimage-3"

// Key is the content address of a build step: the sha256 of its inputs.
func Key(inputs ...any) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	_ = enc.Encode(schema)
	for _, in := range inputs {
		if err := enc.Encode(in); err != nil {
			panic(fmt.Sprintf("nodeimage.Key: unencodable input %T: %v", in, err))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Cache is a folder of finished build steps, one sub-folder per key.
// A step is finished when its folder exists: it is built beside it and
// renamed into place, so an interrupted build never looks finished.
type Cache struct{ Dir string }

// DefaultCacheDir is $NDFQ_CACHE, else the user cache folder's ndfq/.
func DefaultCacheDir() string {
	if d := os.Getenv("NDFQ_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "ndfq")
	}
	return filepath.Join(os.TempDir(), "ndfq-cache")
}

// Path is where the finished step of this kind and key lives.
func (c Cache) Path(kind, key string) string { return filepath.Join(c.Dir, kind, key) }

// Has reports whether the step is finished.
func (c Cache) Has(kind, key string) bool {
	fi, err := os.Stat(c.Path(kind, key))
	return err == nil && fi.IsDir()
}

// Fill runs build into a scratch folder and moves it into place on success.
// It returns the finished folder and whether it was already there.
func (c Cache) Fill(kind, key string, build func(dir string) error) (string, bool, error) {
	final := c.Path(kind, key)
	if c.Has(kind, key) {
		return final, true, nil
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return "", false, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(final), "."+key[:12]+".tmp-")
	if err != nil {
		return "", false, err
	}
	defer os.RemoveAll(tmp)
	if err := build(tmp); err != nil {
		return "", false, err
	}
	if err := os.Rename(tmp, final); err != nil {
		if c.Has(kind, key) {
			return final, true, nil // another run finished the same step first
		}
		return "", false, err
	}
	return final, false, nil
}
