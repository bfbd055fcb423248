package verdict

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/kubeversion"
)

// checkReleases names every release the fleet runs whose own sources the
// oracle was not held to: the apiservers' and each pool's kubelets'.
func (e *evaluation) checkReleases() {
	type where struct {
		pools map[string]bool
		nodes []string
	}
	seen := map[string]*where{}
	add := func(release, pool, node string) {
		w := seen[release]
		if w == nil {
			w = &where{pools: map[string]bool{}}
			seen[release] = w
		}
		w.pools[pool] = true
		if node != "" {
			w.nodes = append(w.nodes, node)
		}
	}
	add(e.run.ServerVersion, ControlPlane, "")
	for _, v := range e.run.APIServerVersions {
		add(v, ControlPlane, "")
	}
	for _, d := range e.run.Declarations {
		add(d.KubeletVersion, d.Pool, d.Node)
	}
	for _, release := range slices.Sorted(maps.Keys(seen)) {
		v, err := kubeversion.Parse(release)
		if err != nil || fixtures.KnownMinor(v.Minor()) != nil {
			continue // an unknown minor is the oracle item's
		}
		if fixtures.IsSource(v) {
			e.v.OracleHeldTo = append(e.v.OracleHeldTo, fmt.Sprintf("%s (the source of ndfq's %s tables)", v, v.Minor()))
			continue
		}
		w := seen[release]
		pools := strings.Join(slices.Sorted(maps.Keys(w.pools)), ", ")
		pool := ""
		if len(w.pools) == 1 {
			pool = pools
		}
		var c fixtures.ReleaseCheck
		checked := false
		if e.policy.ReleaseCheck != nil {
			c, checked = e.policy.ReleaseCheck(v)
		}
		switch {
		case !checked:
			e.unchecked(ItemOracleRelease, pool, w.nodes, "%s (%s): ndfq's %s tables were written from %s and were not checked against %s's own sources (ndfq oracle check %s)", v, pools, v.Minor(), fixtures.Sources[v.Minor()], v, v)
		case !c.Equal():
			e.unchecked(ItemOracleRelease, pool, w.nodes, "%s (%s): its own sources disagree with ndfq's %s tables: %s", v, pools, v.Minor(), strings.Join(c.Differences, "; "))
		default:
			e.v.OracleHeldTo = append(e.v.OracleHeldTo, fmt.Sprintf("%s (checked against its own sources on %s: equal)", v, c.Checked.UTC().Format("2006-01-02")))
		}
	}
}
