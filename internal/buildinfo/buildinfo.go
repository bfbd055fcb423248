// Package buildinfo says which ndfq this is: the release's version, the
// commit it was built from, the Go that built it and the Kubernetes minors
// its oracle knows, so every report can name the ndfq that judged it.
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"slices"

	"github.com/ndfq/ndfq/fixtures"
)

// Version and Commit are set at link time by `make build` and `make
// release` (-X github.com/ndfq/ndfq/internal/buildinfo.Version=v0.1.0).
// Left empty, they are read from the module and VCS information Go
// records, so `go install github.com/ndfq/ndfq/cmd/ndfq@v0.1.0` says v0.1.0.
var (
	Version string
	Commit  string
)

// Info is what `ndfq version -o json` prints.
type Info struct {
	Version          string   `json:"version"`
	Commit           string   `json:"commit"`
	GoVersion        string   `json:"goVersion"`
	Platform         string   `json:"platform"`
	KubernetesMinors []string `json:"kubernetesMinors"`
}

// Get reads the link-time values, falling back to Go's build information.
func Get() Info {
	info := Info{
		Version: Version, Commit: Commit,
		GoVersion:        runtime.Version(),
		Platform:         runtime.GOOS + "/" + runtime.GOARCH,
		KubernetesMinors: slices.Clone(fixtures.Minors),
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return withDefaults(info)
	}
	if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		info.Version = bi.Main.Version
	}
	if info.Commit == "" {
		info.Commit = vcsCommit(bi.Settings)
	}
	return withDefaults(info)
}

func vcsCommit(settings []debug.BuildSetting) string {
	var rev, modified string
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" && modified == "true" {
		rev += "-dirty"
	}
	return rev
}

func withDefaults(i Info) Info {
	if i.Version == "" {
		i.Version = "dev"
	}
	if i.Commit == "" {
		i.Commit = "unknown"
	}
	return i
}
