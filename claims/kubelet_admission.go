package claims

import "fmt"

// KubeletAdmission: a pod bound by spec.nodeName, past the scheduler.
const KubeletAdmission Kind = "kubelet-admission"

// kubeletAdmissionRow: a pod bound past the scheduler is rejected by a
// kubelet that knows the feature and does not declare it; elsewhere it
// runs, with or without the feature's effect.
var kubeletAdmissionRow = Row{
	Kind: KubeletAdmission, Observed: InPass,
	Claim: "a pod bound by spec.nodeName that needs a feature the kubelet knows and does not declare is rejected (PodFeatureUnsupported); elsewhere the kubelet runs it, honouring the feature where it declares it",
	Pool: func(p PoolContext) []Cell {
		var out []Cell
		for _, f := range schedulingFeatures(p.CP) {
			c := p.Cell(KubeletAdmission, f.name)
			switch k := p.K; {
			case unaskablePod(&c, f, p.API):
			case k.Publishes() && k.Knows(f.name) && k.Requires(f.name) && !k.Declares(f.name):
				c.Expect = KubeletRejected
			case !f.exercised:
				c.Uncovered = fmt.Sprintf("fixtures have no exercise of %s yet: whether a %s kubelet that runs the pod honours it is not asked", f.name, k.Minor())
			case k.Declares(f.name):
				c.Expect = Honoured
			default:
				c.Expect = f.undeclared(k.Runtime)
			}
			out = append(out, c)
		}
		return out
	},
}
