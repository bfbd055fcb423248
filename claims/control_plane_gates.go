package claims

import (
	"maps"
	"slices"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
)

// ControlPlaneGate: the live kube-apiserver and kube-scheduler report, in
// kubernetes_feature_enabled, NodeDeclaredFeatures and every gate the
// topology sets as the plan says: the cells of every other kind hang on
// them.
const ControlPlaneGate Kind = "control-plane-gate"

// The control-plane-gate cells' pools: the component, not a node pool.
const (
	APIServerComponent = "(kube-apiserver)"
	SchedulerComponent = "(kube-scheduler)"
)

// What a component reports of a gate.
const (
	GateOn      = "on"
	GateOff     = "off"
	GateUnknown = "unknown to the component"
)

var controlPlaneGateRow = Row{
	Kind: ControlPlaneGate, Observed: BySpec,
	Claim: "kube-apiserver and kube-scheduler report NodeDeclaredFeatures and every gate the topology sets as it plans them",
	Edges: func(t *topology.Topology) []Cell {
		var out []Cell
		for _, c := range []struct {
			pool string
			comp fixtures.Component
		}{{APIServerComponent, t.APIServer()}, {SchedulerComponent, t.Scheduler()}} {
			names := []string{fixtures.NodeDeclaredFeatures}
			for _, g := range slices.Sorted(maps.Keys(c.comp.Gates)) {
				if g != fixtures.NodeDeclaredFeatures {
					names = append(names, g)
				}
			}
			for _, g := range names {
				out = append(out, Cell{Kind: ControlPlaneGate, Pool: c.pool, Kubelet: string(t.ControlPlaneVersion()), Feature: g, Expect: GateState(fixtures.ExpectedGate(c.comp.GateMinor(), c.comp.Gates, g))})
			}
		}
		return out
	},
}

// GateState says a gate's state in a cell's words.
func GateState(enabled, known bool) string {
	switch {
	case !known:
		return GateUnknown
	case enabled:
		return GateOn
	}
	return GateOff
}
