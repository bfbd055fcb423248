package topology

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/kubeversion"
)

// Releases are the Kubernetes releases of every component the topology
// runs: control plane, its kubelets and kube-proxy, and every pool.
func (t *Topology) Releases() []kubeversion.Version {
	set := map[kubeversion.Version]bool{t.ControlPlaneVersion(): true, t.KubeProxyVersion(): true, t.ControlPlaneKubeletVersion(): true}
	for _, v := range t.Versions() {
		set[v] = true
	}
	return slices.SortedFunc(maps.Keys(set), kubeversion.Compare)
}

// CheckOracle holds the oracle to every release the topology runs that is
// not the one its minor's tables were written from (fixtures.CheckRelease,
// kept per oracle in cacheDir; the first check of a release downloads its
// sources). A release whose sources say otherwise is refused, naming each
// difference, before anything is provisioned.
func (t *Topology) CheckOracle(ctx context.Context, cacheDir string, say func(format string, args ...any)) error {
	var problems []string
	for _, v := range t.Releases() {
		if fixtures.IsSource(v) {
			continue
		}
		if _, cached := fixtures.CachedReleaseCheck(cacheDir, v); !cached {
			say("oracle: checking ndfq's %s tables against %s's own sources (once per release and oracle; downloads them through the module proxy)", v.Minor(), v)
		}
		c, err := fixtures.CheckReleaseCached(ctx, cacheDir, v)
		if err != nil {
			return fmt.Errorf("topology %s: %w", t.Name, err)
		}
		if c.Equal() {
			say("oracle: %s", c)
			continue
		}
		problems = append(problems, fmt.Sprintf("%s (%s's tables were written from %s):\n  - %s", v, v.Minor(), fixtures.Sources[v.Minor()], strings.Join(c.Differences, "\n  - ")))
	}
	if len(problems) > 0 {
		return fmt.Errorf("topology %s runs releases whose own sources disagree with ndfq's oracle, so its claims would be judged by another release's tables; update fixtures (and Sources) for them or pick a release that agrees:\n%s", t.Name, strings.Join(problems, "\n"))
	}
	return nil
}

// OracleNotes say, for a report, which release each minor's tables were
// held to; unchecked are the releases held to none (neither the tables'
// source nor checked by this oracle).
func (t *Topology) OracleNotes(cacheDir string) (notes, unchecked []string) {
	for _, v := range t.Releases() {
		c, cached := fixtures.CachedReleaseCheck(cacheDir, v)
		switch {
		case fixtures.IsSource(v):
			notes = append(notes, fmt.Sprintf("%s (the source of ndfq's %s tables)", v, v.Minor()))
		case cached && c.Equal():
			notes = append(notes, fmt.Sprintf("%s (checked against its own sources on %s: equal)", v, c.Checked.UTC().Format("2006-01-02")))
		case cached:
			notes = append(notes, fmt.Sprintf("%s (its own sources disagree: %s)", v, strings.Join(c.Differences, "; ")))
			unchecked = append(unchecked, fmt.Sprintf("%s: its own sources disagree with ndfq's %s tables", v, v.Minor()))
		default:
			notes = append(notes, fmt.Sprintf("%s (not checked against its own sources)", v))
			unchecked = append(unchecked, fmt.Sprintf("%s: ndfq's %s tables were not checked against its own sources (ndfq oracle check %s)", v, v.Minor(), v))
		}
	}
	return notes, unchecked
}
