package claims

import "github.com/ndfq/ndfq/clusters/topology"

// Queueing: a pod Pending for lack of a feature on the pool is bound
// soon after the pool's node starts declaring it (the scheduler's
// requeue on that node update), not after a backoff of minutes.
const Queueing Kind = "queueing"

// The queueing cells ride the feature-drop safe-order wave: there each
// subject's node has just stopped declaring RestartAllContainersOnContainerExits,
// a pod that needs it waits, refused, and the wave's restore makes the
// node declare it again.
var queueingRow = Row{
	Kind: Queueing, Observed: InWave,
	Claim: "a pod refused for lack of a feature on the pool is bound soon after its node declares it again, not after a backoff",
	Edges: queueingCells,
}

// queueingCells: on each subject, a pod refused for lack of DropFeature
// is bound once the node declares it again; where the topology has no
// subject, every pool says why.
func queueingCells(t *topology.Topology) []Cell {
	subjects, why := DropSubjects(t)
	var out []Cell
	if why != "" {
		for _, p := range t.Pools() {
			out = append(out, Cell{Kind: Queueing, Pool: p.Name, Kubelet: p.PoolVersion().String(), Feature: DropFeature, NotApplicable: why})
		}
		return out
	}
	for _, p := range subjects {
		out = append(out, Cell{Kind: Queueing, Pool: p.Name, Kubelet: p.PoolVersion().String(), Feature: DropFeature, Expect: Bound})
	}
	return out
}
