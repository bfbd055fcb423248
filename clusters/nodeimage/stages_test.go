package nodeimage

import (
	"strings"
	"testing"
	"time"
)

// The critical path follows what each stage waited on that ended last:
// the compiles, not the base made beside them, unless the base is longer.
func TestCriticalPath(t *testing.T) {
	record := func(base time.Duration) *stages {
		s := &stages{}
		add := func(name string, took time.Duration, after ...string) {
			s.list = append(s.list, stage{name: name, after: after, took: took})
		}
		add("crictl", 10*time.Second)
		add("base", base, "crictl")
		add("kubernetes v1.36.5", 3*time.Minute)
		add("kubernetes v1.37.2", 3*time.Minute, "kubernetes v1.36.5")
		add("shared images", time.Minute, "base", "kubernetes v1.37.2")
		add("node image v1.37.2", 30*time.Second, "shared images")
		return s
	}
	names := func(path []stage) string {
		var out []string
		for _, st := range path {
			out = append(out, st.name)
		}
		return strings.Join(out, " → ")
	}
	path, total := record(4 * time.Minute).critical()
	if got, want := names(path), "kubernetes v1.36.5 → kubernetes v1.37.2 → shared images → node image v1.37.2"; got != want || total != 7*time.Minute+30*time.Second {
		t.Errorf("compiles longer: %s in %s, want %s in 7m30s", got, total, want)
	}
	path, total = record(8 * time.Minute).critical()
	if got, want := names(path), "crictl → base → shared images → node image v1.37.2"; got != want || total != 9*time.Minute+40*time.Second {
		t.Errorf("base longer: %s in %s, want %s in 9m40s", got, total, want)
	}
	if got := record(4 * time.Minute).summary(); got != "images ready after 7m30s on the critical path: kubernetes v1.36.5 3m0s → kubernetes v1.37.2 3m0s → shared images 1m0s → node image v1.37.2 30s; beside it: crictl 10s, base 4m0s" {
		t.Errorf("summary: %q", got)
	}
	cached := &stages{list: []stage{{name: "base", took: time.Millisecond}, {name: "shared images", after: []string{"base"}, took: 2 * time.Millisecond}}}
	if got := cached.summary(); got != "images ready: every step was cached" {
		t.Errorf("all cached: %q", got)
	}
}
