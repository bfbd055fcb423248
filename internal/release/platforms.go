package release

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Platform is a GOOS/GOARCH pair a binary is built for.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// Platforms are the binaries a release ships; the linux ones are also
// the image's.
var Platforms = []Platform{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}}

// Build is one static ndfq binary: no cgo, paths trimmed, the version and
// commit linked into internal/buildinfo.
type Build struct {
	Go      string // the go command, "go" when empty
	Dir     string // the module's root
	Version string
	Commit  string
}

const buildinfoPkg = "github.com/ndfq/ndfq/internal/buildinfo"

// Binary builds ./cmd/ndfq for p into out.
func (b Build) Binary(ctx context.Context, p Platform, out string) error {
	goCmd := b.Go
	if goCmd == "" {
		goCmd = "go"
	}
	ldflags := fmt.Sprintf("-s -w -X %s.Version=%s -X %s.Commit=%s", buildinfoPkg, b.Version, buildinfoPkg, b.Commit)
	cmd := exec.CommandContext(ctx, goCmd, "build", "-trimpath", "-ldflags", ldflags, "-o", out, "./cmd/ndfq")
	cmd.Dir = b.Dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch)
	if outErr, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build for %s: %w\n%s", p, err, strings.TrimSpace(string(outErr)))
	}
	return nil
}

// BinaryPath is where a release keeps the unpacked binary of p.
func BinaryPath(dist string, p Platform) string {
	return filepath.Join(dist, "build", p.OS+"_"+p.Arch, "ndfq")
}
