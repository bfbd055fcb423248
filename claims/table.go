package claims

import (
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
)

// Table is every claim kind, in the order the matrix lists a pool's
// cells. A new kind is a file with its row, and a line here.
var Table = []Row{
	declaresRow, pathRow, trustRow, streamingRow, resourceSliceRow, nodeOperationsRow,
	placementRow, preemptionRow, updateRow, kubeletAdmissionRow, queueingRow, runtimeUpgradeRow,
	controlPlaneGateRow, signalsRow, foreignSignalsRow, apiServerSignalsRow, staleAlertRow,
}

// Row is one claim kind: what its cells say, the cells it yields for a
// topology, how the suites observe them and how an observation is judged.
type Row struct {
	Kind Kind
	// Claim is what a cell of the kind says, in one line.
	Claim    string
	Observed Observed
	// Pool yields the kind's cells on one pool; Edges its cells of no
	// pool, once per topology. Either may be nil.
	Pool  func(PoolContext) []Cell
	Edges func(*topology.Topology) []Cell
	// Holds judges what was seen against the cell; nil is "seen is the
	// expectation".
	Holds func(c Cell, seen string) bool
}

// Observed says how the suites observe a kind's cells.
type Observed string

const (
	// InPass: one pod or request per cell, all at once, before the specs.
	InPass Observed = "the suite's pass"
	// InSharedPass: one observation in the pass answers a group of cells.
	InSharedPass Observed = "the suite's pass, one observation per pool"
	// InWave: a disruptive wave over the topology's subject pools.
	InWave Observed = "a disruptive wave"
	// AroundPass: the suite's Prometheus, read before and after the pass.
	AroundPass Observed = "the suite's Prometheus, around the pass"
	// BySpec: its own spec reads or asks the cluster.
	BySpec Observed = "its own spec"
	// NotObserved: no probe asks it; its cells are not covered.
	NotObserved Observed = "nothing yet"
)

// PoolContext is what a row decides one pool's cells from.
type PoolContext struct {
	T     *topology.Topology
	Pool  topology.Pool
	CP    string // the control plane's minor
	API   fixtures.Component
	Sched fixtures.Component
	K     fixtures.Kubelet // the pool's kubelet as planned
}

// Cell is a cell of kind about feature on the context's pool.
func (p PoolContext) Cell(kind Kind, feature string) Cell {
	return Cell{Kind: kind, Pool: p.Pool.Name, Kubelet: p.Pool.PoolVersion().String(), Feature: feature}
}

// RowOf is kind's row; ok is false for a kind the table does not have.
func RowOf(kind Kind) (Row, bool) {
	for _, r := range Table {
		if r.Kind == kind {
			return r, true
		}
	}
	return Row{}, false
}

// Holds judges an observation of the cell as its kind's row does.
func (c Cell) Holds(seen string) bool {
	if r, ok := RowOf(c.Kind); ok && r.Holds != nil {
		return r.Holds(c, seen)
	}
	return seen == c.Expect
}
