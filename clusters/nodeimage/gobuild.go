package nodeimage

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"

	"github.com/ndfq/ndfq/internal/gotool"
	"golang.org/x/mod/semver"
)

// GoProgram is one binary built from a public module through the module
// proxy. Modules such as k8s.io/kubernetes and etcd's server replace their
// siblings with local paths that their module zips do not carry, so the
// binary is built from a generated wrapper module that requires the root
// module and points every such sibling at its published version.
type GoProgram struct {
	Module  string   // root module, e.g. k8s.io/kubernetes
	Version string   // e.g. v1.37.2
	Package string   // main package, e.g. k8s.io/kubernetes/cmd/kubelet
	LDFlags []string // -X flags and the like
	Binary  string   // file name when the package's last element is not it
	Tags    []string // build tags
	// CGO builds with cgo and links statically (runc's nsenter is C); the
	// C libraries it links (libseccomp-dev) must be on the build host.
	CGO bool
}

// Name is the binary's file name: the last element of its package path,
// without a major-version suffix such as /v3.
func (p GoProgram) Name() string {
	if p.Binary != "" {
		return p.Binary
	}
	base := path.Base(p.Package)
	if len(base) > 1 && base[0] == 'v' && strings.Trim(base[1:], "0123456789") == "" {
		base = path.Base(path.Dir(p.Package))
	}
	return base
}

func (p GoProgram) key() string {
	k := Key("goprogram", p.Module, p.Version, p.Package, p.LDFlags, p.Name(), runtime.Version(), runtime.GOARCH)
	if len(p.Tags) > 0 || p.CGO {
		k = Key(k, p.Tags, p.CGO) // keeps the keys of programs built before these fields
	}
	return k
}

// buildArgs are the go build arguments that write the binary to out.
func (p GoProgram) buildArgs(out string) []string {
	ldflags := append([]string{"-s", "-w"}, p.LDFlags...)
	if p.CGO {
		ldflags = append(ldflags, "-extldflags", "-static")
	}
	args := []string{"build", "-trimpath", "-o", out}
	if len(p.Tags) > 0 {
		args = append(args, "-tags", strings.Join(p.Tags, " "))
	}
	return append(args, "-ldflags", strings.Join(ldflags, " "), p.Package)
}

func (p GoProgram) env() []string {
	if p.CGO {
		return []string{"CGO_ENABLED=1"}
	}
	return nil
}

// siblingVersion is the version a locally replaced sibling module is
// published at: kubernetes v1.Y.Z publishes its staging modules as v0.Y.Z;
// other projects (etcd) publish siblings at the root's own version.
func siblingVersion(rootModule, rootVersion string) string {
	if rootModule == "k8s.io/kubernetes" && semver.Major(rootVersion) == "v1" {
		return "v0" + strings.TrimPrefix(rootVersion, "v1")
	}
	return rootVersion
}

// wrapperGoMod renders the wrapper go.mod from the root module's own go.mod.
func wrapperGoMod(rootModule, rootVersion string, rootGoMod []byte) ([]byte, error) {
	f, err := modfile.Parse(rootModule+"@"+rootVersion+"/go.mod", rootGoMod, nil)
	if err != nil {
		return nil, err
	}
	w := &modfile.File{}
	if err := w.AddModuleStmt("ndfq.local/build/" + strings.ReplaceAll(rootModule, "/", "_")); err != nil {
		return nil, err
	}
	goVersion, toolchain := gotool.Local(), ""
	if f.Go != nil {
		goVersion = f.Go.Version
		if toolchain, err = gotool.Toolchain(rootModule+"@"+rootVersion, goVersion); err != nil {
			return nil, err
		}
	}
	if err := w.AddGoStmt(goVersion); err != nil {
		return nil, err
	}
	if toolchain != "" {
		if err := w.AddToolchainStmt(toolchain); err != nil {
			return nil, err
		}
	}
	if err := w.AddRequire(rootModule, rootVersion); err != nil {
		return nil, err
	}
	sib := siblingVersion(rootModule, rootVersion)
	for _, r := range f.Replace {
		if path.Base(r.New.Path) == "FORBIDDEN_DEPENDENCY" {
			continue // etcd's guard against depending on a module at all: nothing to point at
		}
		newPath, newVersion := r.New.Path, r.New.Version
		if modfile.IsDirectoryPath(newPath) {
			newPath, newVersion = r.Old.Path, sib
		}
		if err := w.AddReplace(r.Old.Path, r.Old.Version, newPath, newVersion); err != nil {
			return nil, err
		}
	}
	w.Cleanup()
	return w.Format()
}

// refusedModule matches the go command's report of a module the proxy refuses.
var refusedModule = regexp.MustCompile(`(\S+@v\S+): reading \S+: 403 Forbidden`)

// refusedModules lists the module versions the proxy refused, from go's output.
func refusedModules(out string) []string {
	var mods []string
	for _, m := range refusedModule.FindAllStringSubmatch(out, -1) {
		if !slices.Contains(mods, m[1]) {
			mods = append(mods, m[1])
		}
	}
	return mods
}

// olderKubeletHint points at the topology fields that run a control plane
// whose own kubelet or kube-proxy cannot be built over older ones.
func olderKubeletHint(rootModule string, pkgs []string) string {
	for _, p := range pkgs {
		if rootModule == "k8s.io/kubernetes" && (path.Base(p) == Kubelet || path.Base(p) == KubeProxy) {
			return "; its control plane can still run over an older kubelet and kube-proxy: set controlPlane.kubeletVersion and controlPlane.kubeProxyVersion (as clusters/topologies/next.yaml does)"
		}
	}
	return ""
}

func runGo(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return gotool.Run(ctx, dir, nil, args...)
}

// wrapperModule makes (or reuses) the tidy wrapper module for a root module
// and the set of main packages it must build.
func (b *Builder) wrapperModule(ctx context.Context, rootModule, rootVersion string, pkgs []string) (string, error) {
	sort.Strings(pkgs)
	key := Key("wrapper", rootModule, rootVersion, pkgs, runtime.Version())
	dir, hit, err := b.Cache.Fill("wrapper", key, func(dir string) error {
		info, err := gotool.Download(ctx, rootModule, rootVersion)
		if err != nil {
			return err
		}
		rootGoMod, err := os.ReadFile(info.GoMod)
		if err != nil {
			return err
		}
		gomod, err := wrapperGoMod(rootModule, rootVersion, rootGoMod)
		if err != nil {
			return err
		}
		var tools strings.Builder
		tools.WriteString("//go:build tools\n\n// Package tools pins the programs this wrapper builds.\npackage tools\n\nimport (\n")
		for _, p := range pkgs {
			fmt.Fprintf(&tools, "\t_ %q\n", p)
		}
		tools.WriteString(")\n")
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), gomod, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "tools.go"), []byte(tools.String()), 0o644); err != nil {
			return err
		}
		if _, err = runGo(ctx, dir, "mod", "tidy"); err != nil {
			if missing := refusedModules(err.Error()); len(missing) > 0 {
				return fmt.Errorf("%s@%s cannot be built here: the Go module proxy does not serve %s, needed by the wrapper module of %s (one module for all of them: one importer is enough to stop every one)%s: %w",
					rootModule, rootVersion, strings.Join(missing, ", "), strings.Join(pkgs, ", "), olderKubeletHint(rootModule, pkgs), err)
			}
			return err
		}
		return nil
	})
	if err == nil && !hit {
		b.Log.Printf("  wrapper module for %s@%s ready", rootModule, rootVersion)
	}
	return dir, err
}

// ScratchGoCacheEnv, set to true, makes each BuildPrograms call compile
// with a Go build cache of its own, removed when the call ends: a cold run
// on a small disk (a hosted runner's ~14 GB) then keeps none of the ~1.7 GB
// a Kubernetes minor's build leaves in the shared one, which no later run
// reads (the binaries are cached by content). The price: what releases
// share is compiled again for each.
const ScratchGoCacheEnv = "NDFQ_SCRATCH_GOCACHE"

// BuildPrograms builds each program (or reuses the cached binary) and
// returns the path of each binary by program name.
func (b *Builder) BuildPrograms(ctx context.Context, progs []GoProgram) (map[string]string, error) {
	byRoot := map[string][]string{}
	for _, p := range progs {
		id := p.Module + "@" + p.Version
		byRoot[id] = append(byRoot[id], p.Package)
	}
	useScratch := os.Getenv(ScratchGoCacheEnv) == "true"
	scratch := "" // the call's Go build cache, made at its first build
	defer func() {
		if scratch != "" {
			_ = os.RemoveAll(scratch)
		}
	}()
	paths := map[string]string{}
	for _, p := range progs {
		p := p
		var done func(error)
		dir, hit, err := b.Cache.Fill("bin", p.key(), func(out string) error {
			done = b.Log.Step("build %s %s", p.Name(), p.Version)
			env := p.env()
			if useScratch {
				if scratch == "" {
					d, err := os.MkdirTemp(b.Cache.Dir, "gocache-")
					if err != nil {
						return err
					}
					scratch = d
				}
				env = append(env, "GOCACHE="+scratch)
			}
			wrapper, err := b.wrapperModule(ctx, p.Module, p.Version, byRoot[p.Module+"@"+p.Version])
			if err == nil {
				_, err = gotool.RunEnv(ctx, wrapper, env, nil, p.buildArgs(filepath.Join(out, p.Name()))...)
			}
			done(err)
			return err
		})
		if err != nil {
			return nil, err
		}
		if hit {
			b.Log.Printf("build %s %s: cached", p.Name(), p.Version)
		}
		paths[p.Name()] = filepath.Join(dir, p.Name())
	}
	return paths, nil
}
