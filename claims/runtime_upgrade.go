package claims

import "github.com/ndfq/ndfq/clusters/topology"

// RuntimeUpgrade: a node whose containerd is upgraded in place under a
// running kubelet keeps its declarations until the kubelet restarts
// (an upstream bug), the probe holds in that window, and the restarted
// kubelet declares what the new runtime allows.
const RuntimeUpgrade Kind = "runtime-upgrade"

var runtimeUpgradeRow = Row{
	Kind: RuntimeUpgrade, Observed: BySpec,
	Claim: "a node whose runtime is upgraded under a running kubelet keeps its declarations until the kubelet restarts (an upstream bug), the probe holds meanwhile, and the restarted kubelet declares what the new runtime allows",
	Edges: runtimeUpgradeCells,
}

// RuntimeUpgradeBug is the upstream issue behind the runtime-upgrade
// cell's expectation: the kubelet discovers runtime features once, at start.
const RuntimeUpgradeBug = "kubernetes/kubernetes#138099: the kubelet discovers runtime features once, at start, so a runtime upgraded under it leaves its declarations stale until it restarts (SIG Node: a kubelet restart is the workaround; KEP-6147 would make it dynamic)"

// RuntimeFeature is the feature of a runtime-upgrade cell that does not
// apply: there is no subject, so no feature its runtime would decide.
const RuntimeFeature = "(a feature its runtime decides)"

// StaleUntilRestart is the runtime-upgrade cell's expectation: the node
// keeps its declared set while the kubelet runs on the upgraded runtime,
// the probe holds missing-report, and the restarted kubelet declares the
// feature.
const StaleUntilRestart = "stale until the kubelet restarts"

// runtimeUpgradeCells: the subject's one cell, or every pool's reason.
func runtimeUpgradeCells(t *topology.Topology) []Cell {
	plan, why := PlanRuntimeUpgrade(t)
	if why != "" {
		var out []Cell
		for _, p := range t.Pools() {
			out = append(out, Cell{Kind: RuntimeUpgrade, Pool: p.Name, Kubelet: p.PoolVersion().String(), Feature: RuntimeFeature, NotApplicable: why})
		}
		return out
	}
	p := plan.Subject
	return []Cell{{Kind: RuntimeUpgrade, Pool: p.Name, Kubelet: p.PoolVersion().String(), Feature: plan.Feature, Expect: StaleUntilRestart, UpstreamBug: RuntimeUpgradeBug}}
}
