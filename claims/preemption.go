package claims

import "github.com/ndfq/ndfq/fixtures"

// Preemption: a high-priority pod that needs a feature preempts a
// low-priority pod on the pool only where its nodes declare it.
const Preemption Kind = "preemption"

var preemptionRow = Row{
	Kind: Preemption, Observed: InPass,
	Claim: "a high-priority pod that needs a feature preempts a low-priority pod on the pool only where its nodes declare it",
	Pool: func(p PoolContext) []Cell {
		f, ok := preemptionFeature(p.CP)
		if !ok {
			return nil
		}
		c := p.Cell(Preemption, f.name)
		switch {
		case unaskablePod(&c, f, p.API):
		case !p.Sched.Enables(fixtures.NodeDeclaredFeatures):
			c.NotApplicable = "kube-scheduler has NodeDeclaredFeatures off in this topology: any node may be a preemption candidate"
		case p.K.Declares(f.name) || !p.K.Requires(f.name):
			c.Expect = fixtures.Preempted
		default:
			c.Expect = fixtures.NotPreempted
		}
		return []Cell{c}
	},
}

// preemptionFeature is the feature the preemption cells' pod needs:
// DropFeature, where the control plane infers it at scheduling.
func preemptionFeature(cp string) (featureRow, bool) {
	for _, f := range schedulingFeatures(cp) {
		if f.name == DropFeature {
			return f, true
		}
	}
	return featureRow{}, false
}
