// Package gotool runs the go command for code ndfq builds from the module
// proxy (Kubernetes components, upstream registries), switching to an
// approved newer toolchain only where a module needs one.
package gotool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// approved are the Go releases a build may switch to when a module needs a
// newer Go than the machine's (Kubernetes 1.38 needs 1.27); the go command
// fetches them from the module proxy like any module.
var approved = map[string]string{"v1.27": "go1.27.3"}

// Local is the machine's Go version, "1.26.8".
func Local() string { return strings.TrimPrefix(runtime.Version(), "go") }

// Toolchain is the toolchain a module whose go.mod says `go need` builds
// with: "" for the machine's own, or an approved newer release.
func Toolchain(module, need string) (string, error) {
	if semver.Compare("v"+need, "v"+Local()) <= 0 {
		return "", nil
	}
	t := approved[semver.MajorMinor("v"+need)]
	if t == "" || semver.Compare("v"+need, "v"+strings.TrimPrefix(t, "go")) > 0 {
		return "", fmt.Errorf("%s needs go %s, this machine has %s and ndfq knows no approved toolchain for it (add one to internal/gotool)", module, need, Local())
	}
	return t, nil
}

// Env is the environment of go commands run in dir: static binaries,
// modules through the configured proxy, and the machine's own Go unless
// dir's go.mod names a toolchain.
func Env(dir string) []string {
	toolchain := "local"
	if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
		if f, err := modfile.Parse("go.mod", data, nil); err == nil && f.Toolchain != nil {
			toolchain = f.Toolchain.Name
		}
	}
	return append(os.Environ(), "CGO_ENABLED=0", "GOTOOLCHAIN="+toolchain, "GOFLAGS=-mod=mod", "GOWORK=off")
}

// Run runs go with args in dir; the error carries the output's tail.
func Run(ctx context.Context, dir string, stdin []byte, args ...string) ([]byte, error) {
	return RunEnv(ctx, dir, nil, stdin, args...)
}

// RunEnv is Run with extra environment entries, which win over Env's
// (CGO_ENABLED=1 for a program that needs cgo).
func RunEnv(ctx context.Context, dir string, env []string, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(Env(dir), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		all := errOut.String() + out.String()
		return out.Bytes(), fmt.Errorf("go %s in %s: %w\n%s", strings.Join(args, " "), dir, err, tail(all, 3000))
	}
	return out.Bytes(), nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// Module is what `go mod download -json` reports of one module version.
type Module struct {
	Dir   string // the module's extracted source in the module cache
	GoMod string // the module's go.mod in the module cache
	Zip   string // the module's zip in the module cache
	Error string
}

// Download fetches module@version into the module cache through the proxy.
// A module that needs a newer Go than the machine's still downloads (the
// go command reports that as an error after fetching): its go.mod then says
// which toolchain builds it, and its source can be read.
func Download(ctx context.Context, module, version string) (Module, error) {
	dir, err := os.MkdirTemp("", "ndfq-download-")
	if err != nil {
		return Module{}, err
	}
	defer os.RemoveAll(dir)
	out, runErr := Run(ctx, dir, nil, "mod", "download", "-json", module+"@"+version)
	var m Module
	if err := json.Unmarshal(out, &m); err != nil || m.GoMod == "" {
		return m, fmt.Errorf("download %s@%s: %w (%s)", module, version, errors.Join(runErr, err), m.Error)
	}
	for _, f := range []string{m.GoMod, m.Zip} {
		if _, err := os.Stat(f); err != nil {
			return m, fmt.Errorf("download %s@%s: %w (%s)", module, version, errors.Join(runErr, err), m.Error)
		}
	}
	return m, nil
}

// GoVersion is the `go` line of a go.mod file, or the machine's version
// when it has none.
func GoVersion(gomod []byte) (string, error) {
	f, err := modfile.Parse("go.mod", gomod, nil)
	if err != nil {
		return "", err
	}
	if f.Go == nil {
		return Local(), nil
	}
	return f.Go.Version, nil
}
