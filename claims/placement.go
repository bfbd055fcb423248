package claims

import (
	"strings"

	"github.com/ndfq/ndfq/fixtures"
)

// Placement: the scheduler binds or refuses a pod steered to the pool.
const Placement Kind = "placement"

// placementRow: a control pod always binds; a pod that needs a feature
// binds where the pool declares it and is refused elsewhere, also one that
// needs two at once.
var placementRow = Row{
	Kind: Placement, Observed: InPass,
	Claim: "the scheduler binds a pod on the pool where its nodes declare what it needs and refuses it elsewhere; a control pod always binds",
	Pool: func(p PoolContext) []Cell {
		c := p.Cell(Placement, NoFeature)
		c.Expect = Bound
		out := []Cell{c}
		for _, f := range schedulingFeatures(p.CP) {
			c := p.Cell(Placement, f.name)
			switch {
			case unaskablePod(&c, f, p.API):
			case p.K.Declares(f.name) || !p.K.Requires(f.name):
				// Past the feature's MaxVersion the plugin asks nothing of the node.
				c.Expect = Bound
			case !p.Sched.Enables(fixtures.NodeDeclaredFeatures):
				c.NotApplicable = "kube-scheduler has NodeDeclaredFeatures off in this topology: nothing refuses the pod (the staged rollout covers that stage)"
			default:
				c.Expect = Refused
			}
			out = append(out, c)
		}
		return append(out, pairCell(p.Cell(Placement, ""), p.CP, p.API, p.Sched, p.K))
	},
}

// pairSep joins the two features of a pair cell.
const pairSep = " + "

// NoPair is the feature of a pair cell where no two features can be needed.
const NoPair = "(two features at once)"

// PairFeatures are the features a pair cell's pod needs at once; nil for
// any other cell.
func PairFeatures(c Cell) []string {
	if !strings.Contains(c.Feature, pairSep) {
		return nil
	}
	return strings.Split(c.Feature, pairSep)
}

// pairCell is the placement of a pod that needs two features at once
// (upstream's multi-feature case): bound only where the pool declares
// both, as the plugin checks every requirement. Its features are the
// first two the control plane infers at scheduling that a pod can need
// here; with fewer, the cell says so.
func pairCell(c Cell, cp string, api, sched fixtures.Component, k fixtures.Kubelet) Cell {
	var pair []string
	for _, f := range schedulingFeatures(cp) {
		if f.probed && api.Enables(f.apiGate) && len(pair) < 2 {
			pair = append(pair, f.name)
		}
	}
	switch c.Feature = strings.Join(pair, pairSep); {
	case len(pair) < 2:
		c.Feature = NoPair
		c.NotApplicable = "kube-apiserver has fewer than two of the features fixtures can ask at scheduling on in this topology: no pod can need two at once"
	case !sched.Enables(fixtures.NodeDeclaredFeatures):
		c.NotApplicable = "kube-scheduler has NodeDeclaredFeatures off in this topology: nothing refuses the pod (the staged rollout covers that stage)"
	case k.Declares(pair[0]) && k.Declares(pair[1]):
		c.Expect = Bound
	default:
		c.Expect = Refused
	}
	return c
}
