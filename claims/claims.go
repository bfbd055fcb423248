// Package claims is the claim matrix: for a topology, every (claim × pool
// × feature) cell the oracle knows, what it expects there, or why it does
// not apply. Each claim kind is one row of Table, in a file of its own:
// the cells it yields, how the suites observe it and how an observation is
// judged. The suites make one spec of each cell (a Skip with the reason
// where it does not apply), report.md asks the table whether each cell
// that applies was observed and held, and `ndfq report claims` prints it
// without a cluster. Wave planning (which pools a disruptive scenario
// takes) is plan.go's.
package claims

import (
	"fmt"
	"slices"
	"sync"

	"sigs.k8s.io/yaml"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
)

// Kind of claim; the values are report.md's observation kinds. Each is
// declared in its row's file.
type Kind string

// Expectations of a cell.
const (
	Declared = "declared"
	Absent   = "absent"
	Bound    = "bound"
	Refused  = "refused"
	Admitted = "200"
	Rejected = "403"
	// Created is an admitted create (a ResourceSlice's).
	Created = "201"
	// Invalid is validation's refusal, before any admission plugin.
	Invalid = "422"
	// Served: a streaming operation reached the container and back.
	Served = "served"
	// Honoured: the kubelet runs the pod and the feature has its effect.
	Honoured = fixtures.Honoured
	// Ignored: the kubelet runs the pod without the effect (findings F1, F15).
	Ignored = fixtures.Ignored
	// SandboxRefused: the kubelet admits the pod but never starts it (F17).
	SandboxRefused = fixtures.SandboxRefused
	// KubeletRejected is the kubelet's PodFeatureUnsupported.
	KubeletRejected = fixtures.KubeletRejectionReason
)

// NoFeature is the feature of a control cell: its pod or update needs nothing.
const NoFeature = "(none)"

// ControlFeature names a control update's cell, so each control is its own cell.
func ControlFeature(name string) string { return NoFeature + " " + name }

// Cell is one claim on one pool about one feature.
type Cell struct {
	Kind    Kind   `json:"kind"`
	Pool    string `json:"pool"`
	Kubelet string `json:"kubelet"`
	Feature string `json:"feature"`
	// Expect is what must be seen where the cell applies.
	Expect string `json:"expect,omitempty"`
	// NotApplicable says why the cell is not asked on this topology; "" when it applies.
	NotApplicable string `json:"notApplicable,omitempty"`
	// Uncovered says why ndfq cannot ask a cell that applies (no probe yet).
	Uncovered string `json:"uncovered,omitempty"`
	// Accepted is the topology's reason for running without an uncovered
	// cell (its acceptUncovered); without one the run cannot be GO.
	Accepted string `json:"accepted,omitempty"`
	// UpstreamBug says the expected outcome is one upstream calls a bug.
	UpstreamBug string `json:"upstreamBug,omitempty"`
}

// Applies is true when a spec must observe the cell.
func (c Cell) Applies() bool { return c.NotApplicable == "" && c.Uncovered == "" }

// Key identifies the cell in observations: kind, pool, feature.
func (c Cell) Key() string { return Key(string(c.Kind), c.Pool, c.Feature) }

// Key is the identity an observation and a cell share.
func Key(kind, pool, feature string) string { return kind + "/" + pool + "/" + feature }

// Status is the cell in one word and its reason, for tables.
func (c Cell) Status() string {
	switch {
	case c.NotApplicable != "":
		return "not applicable: " + c.NotApplicable
	case c.Uncovered != "" && c.Accepted != "":
		return "not covered, accepted by the topology (" + c.Accepted + "): " + c.Uncovered
	case c.Uncovered != "":
		return "not covered: " + c.Uncovered
	}
	if c.UpstreamBug != "" {
		return "expect " + c.Expect + " (an upstream bug: " + c.UpstreamBug + ")"
	}
	return "expect " + c.Expect
}

// Matrix is every cell of the topology: each pool's, in topology order and
// by Table's order of kinds, then the cells of no pool. It is computed
// once per topology in a process; callers get their own copy.
func Matrix(t *topology.Topology) []Cell {
	key, err := yaml.Marshal(t)
	if err != nil {
		return matrix(t) // not cacheable, still answerable
	}
	if cells, ok := matrices.Load(string(key)); ok {
		return slices.Clone(cells.([]Cell))
	}
	cells := matrix(t)
	matrices.Store(string(key), cells)
	return slices.Clone(cells)
}

// matrices caches Matrix by the topology's content.
var matrices sync.Map

func matrix(t *topology.Topology) []Cell {
	var out []Cell
	for _, p := range poolContexts(t) {
		for _, row := range Table {
			if row.Pool != nil {
				out = append(out, row.Pool(p)...)
			}
		}
	}
	for _, row := range Table {
		if row.Edges != nil {
			out = append(out, row.Edges(t)...)
		}
	}
	for i := range out {
		if c := &out[i]; c.Uncovered != "" {
			for _, a := range t.AcceptUncovered {
				if a.Matches(string(c.Kind), c.Pool, c.Feature) {
					c.Accepted = a.Reason
					break
				}
			}
		}
	}
	return out
}

// poolContexts are the contexts a row decides each pool's cells from.
func poolContexts(t *topology.Topology) []PoolContext {
	cp := t.ControlPlaneVersion().Minor()
	var out []PoolContext
	for _, pool := range t.Pools() {
		out = append(out, PoolContext{T: t, Pool: pool, CP: cp, API: t.APIServer(), Sched: t.Scheduler(), K: pool.Intent()})
	}
	return out
}

// CheckAccepted refuses a topology's acceptUncovered entry that names no
// cell ndfq cannot ask (a stale or mistyped one would accept nothing, or
// later accept a claim nobody looked at).
func CheckAccepted(t *topology.Topology) error {
	cells := Matrix(t)
	var problems []string
	for i, a := range t.AcceptUncovered {
		if !slices.ContainsFunc(cells, func(c Cell) bool { return c.Uncovered != "" && a.Matches(string(c.Kind), c.Pool, c.Feature) }) {
			problems = append(problems, fmt.Sprintf("acceptUncovered[%d]: no %s cell for %s on %s is uncovered in this topology (ndfq report claims --topology %s lists them)", i, a.Kind, a.Feature, nonEmpty(a.Pool, "any pool"), t.Name))
		}
	}
	if len(problems) > 0 {
		return &topology.ValidationError{Problems: problems}
	}
	return nil
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Count is how many cells apply, are not applicable and are not covered.
func Count(cells []Cell) (applies, notApplicable, uncovered int) {
	for _, c := range cells {
		switch {
		case c.NotApplicable != "":
			notApplicable++
		case c.Uncovered != "":
			uncovered++
		default:
			applies++
		}
	}
	return
}

// OfPool are the cells of kind on pool, in matrix order.
func OfPool(cells []Cell, kind Kind, pool string) []Cell {
	var out []Cell
	for _, c := range cells {
		if c.Kind == kind && c.Pool == pool {
			out = append(out, c)
		}
	}
	return out
}

// Find is the cell of kind, pool and feature; it panics on a cell the
// matrix does not have, which is a spec asking a claim the oracle lacks.
func Find(cells []Cell, kind Kind, pool, feature string) Cell {
	for _, c := range cells {
		if c.Kind == kind && c.Pool == pool && c.Feature == feature {
			return c
		}
	}
	panic("claims: no cell " + Key(string(kind), pool, feature))
}
