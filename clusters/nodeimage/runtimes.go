package nodeimage

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// runtimeBuild is how a runtime release other than the base image's
// Debian containerd gets into a node: programs built from the module
// proxy, and where each lands. The paths come first on the node's PATH
// (/usr/local/sbin, /usr/local/bin) and are where kind's containerd.service
// starts containerd, so the Debian binaries below them are never run.
type runtimeBuild struct {
	programs []GoProgram
	dest     map[string]string // binary name -> path inside the node
}

// containerdBuildTags leave out the snapshotters kind never selects (as
// kind's base image does); urfave_cli_no_docs drops the man-page generator.
var containerdBuildTags = []string{"no_aufs", "no_zfs", "no_btrfs", "no_devmapper", "urfave_cli_no_docs"}

// runtimeBuilds maps a fixtures.Runtimes name to its build.
var runtimeBuilds = map[string]runtimeBuild{
	"containerd-2.4.2": {
		programs: append(containerdPrograms("v2.4.2"), runcProgram("v1.5.3")),
		dest: map[string]string{
			"containerd":              "/usr/local/bin/containerd",
			"containerd-shim-runc-v2": "/usr/local/bin/containerd-shim-runc-v2",
			"ctr":                     "/usr/local/bin/ctr",
			"runc":                    "/usr/local/sbin/runc",
		},
	},
}

func containerdPrograms(version string) []GoProgram {
	var out []GoProgram
	for _, cmd := range []string{"containerd", "containerd-shim-runc-v2", "ctr"} {
		out = append(out, GoProgram{
			Module: "github.com/containerd/containerd/v2", Version: version,
			Package: "github.com/containerd/containerd/v2/cmd/" + cmd,
			LDFlags: []string{"-X github.com/containerd/containerd/v2/version.Version=" + version},
			Tags:    containerdBuildTags,
		})
	}
	return out
}

// runcProgram is runc with seccomp, linked statically; libpathrs (a Rust
// library, runc's default from 1.5) is left out for its Go fallback.
func runcProgram(version string) GoProgram {
	return GoProgram{
		Module: "github.com/opencontainers/runc", Version: version,
		Package: "github.com/opencontainers/runc",
		LDFlags: []string{"-X main.version=" + strings.TrimPrefix(version, "v")},
		Tags:    []string{"seccomp", "urfave_cli_no_docs", "netgo", "osusergo"},
		CGO:     true,
	}
}

// runtimeBuildFor is the build of a runtime other than the default.
func runtimeBuildFor(name string) (runtimeBuild, error) {
	rb, ok := runtimeBuilds[name]
	if !ok {
		return rb, fmt.Errorf("no node image build for runtime %q (builds exist for %s)", name, strings.Join(slices.Sorted(maps.Keys(runtimeBuilds)), ", "))
	}
	return rb, nil
}

// RuntimePaths are the paths inside a node where a runtime other than the
// base image's puts its binaries: what an in-place upgrade to it replaces.
func RuntimePaths(name string) ([]string, error) {
	rb, err := runtimeBuildFor(name)
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Values(rb.dest)), nil
}

// place maps the built binaries' node paths to the binaries.
func (rb runtimeBuild) place(bins map[string]string) map[string]string {
	out := map[string]string{}
	for name, dst := range rb.dest {
		out[dst] = bins[name]
	}
	return out
}
