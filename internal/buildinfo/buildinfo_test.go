package buildinfo

import (
	"runtime/debug"
	"testing"

	"github.com/ndfq/ndfq/fixtures"
)

func TestLinkTimeValuesWin(t *testing.T) {
	Version, Commit = "v0.1.0", "abc123"
	t.Cleanup(func() { Version, Commit = "", "" })
	i := Get()
	if i.Version != "v0.1.0" || i.Commit != "abc123" {
		t.Errorf("Get() = %+v, want the link-time version and commit", i)
	}
	if len(i.KubernetesMinors) != len(fixtures.Minors) || i.GoVersion == "" || i.Platform == "" {
		t.Errorf("Get() = %+v: want the oracle's minors, the Go version and the platform", i)
	}
}

func TestUnsetValuesSayDevAndUnknown(t *testing.T) {
	// A test binary's main module is (devel) and has no VCS stamp.
	if i := Get(); i.Version != "dev" {
		t.Errorf("Version = %q, want dev for a (devel) build", i.Version)
	}
	got := vcsCommit([]debug.BuildSetting{{Key: "vcs.revision", Value: "f00"}, {Key: "vcs.modified", Value: "true"}})
	if got != "f00-dirty" {
		t.Errorf("vcsCommit = %q, want f00-dirty", got)
	}
}
