package rollout

import (
	"fmt"
	"maps"
	"slices"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/kubeversion"
	"github.com/ndfq/ndfq/probes"
)

// IntentPool is what an operator plans for one pool: how many nodes, and
// the kubelet (version, gates, runtime) each of them runs.
type IntentPool struct {
	Count   int
	Kubelet fixtures.Kubelet
}

// Intent is the fleet's plan by pool name (a topology file is one).
type Intent map[string]IntentPool

// CheckIntent holds the run to the plan: each reachable node's pool, node
// count, kubelet version, reported gates and declared set against what the
// oracle says its pool's planned kubelet runs and declares. A kubelet that
// drifted from the plan but declares consistently with its own gates is
// caught here, not by declared-but-not-enabled.
func (g *Gate) CheckIntent(run *probes.Run, intent Intent) {
	add := func(pool, node, format string, args ...any) {
		g.Reasons = append(g.Reasons, Reason{Condition: IntentMismatch, Pool: pool, Node: node, Detail: fmt.Sprintf(format, args...)})
	}
	g.intentChecked = true
	seen := map[string]int{}
	for _, d := range run.Declarations {
		seen[d.Pool]++
		plan, ok := intent[d.Pool]
		if !ok {
			add(d.Pool, d.Node, "pool %q is not in the intent (it plans %v)", d.Pool, slices.Sorted(maps.Keys(intent)))
			continue
		}
		k := plan.Kubelet
		if want, err := kubeversion.Parse(k.Version); err == nil && d.KubeletVersion != want.String() {
			add(d.Pool, d.Node, "kubelet %s, the intent plans %s", d.KubeletVersion, want)
			continue // gates and declarations of another minor say nothing more
		}
		if d.Unreachable != "" {
			continue // kubelet-unreachable already holds: its gates cannot be read
		}
		minor := k.Minor()
		planned := fixtures.EffectiveGates(minor, k.Gates)
		for _, gate := range slices.Sorted(maps.Keys(planned)) {
			if d.Gates.Known(gate) && d.Gates.Enabled(gate) != planned[gate] {
				add(d.Pool, d.Node, "gate %s: the intent plans %t, the kubelet reports %s", gate, planned[gate], d.Gates.Describe(gate))
			}
		}
		must := k.MustDeclare()
		for _, f := range must {
			if !slices.Contains(d.Declared, f) {
				add(d.Pool, d.Node, "feature %s: the intent's kubelet declares it, the node does not (declares %v)", f, d.Declared)
			}
		}
		for _, f := range d.Declared {
			if !slices.Contains(must, f) {
				add(d.Pool, d.Node, "feature %s: the node declares it, the intent's kubelet does not (it declares %v)", f, must)
			}
		}
	}
	for _, pool := range slices.Sorted(maps.Keys(intent)) {
		if n := seen[pool]; n != intent[pool].Count {
			add(pool, "", "%d node(s), the intent plans %d", n, intent[pool].Count)
		}
	}
	g.decide()
}
