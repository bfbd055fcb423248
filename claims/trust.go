package claims

import (
	"slices"
	"strings"

	"github.com/ndfq/ndfq/clusters/topology"
)

// Trust: a node's own kubelet credentials may write its own node's
// declaredFeatures and not another node's (NodeRestriction).
const Trust Kind = "trust"

// The trust cells' features: whose declaredFeatures a pool's kubelet writes.
const (
	OwnNode     = "its own node's declaredFeatures"
	AnotherNode = "another node's declaredFeatures"
)

// trustRow: a pool's kubelet identity may write its own node's
// declarations and not another node's (NodeRestriction).
var trustRow = Row{
	Kind: Trust, Observed: BySpec,
	Claim: "a kubelet's credentials write its own node's declaredFeatures (200) and not another node's (403, NodeRestriction)",
	Pool: func(p PoolContext) []Cell {
		var out []Cell
		for _, tc := range [][2]string{{OwnNode, Admitted}, {AnotherNode, Rejected}} {
			c := p.Cell(Trust, tc[0])
			c.Expect = tc[1]
			if why := withoutNodeRestriction(p.T); why != "" {
				c.NotApplicable = why
			}
			out = append(out, c)
		}
		return out
	},
}

// withoutNodeRestriction says why a topology's apiserver runs without the
// NodeRestriction admission plugin (kubeadm enables it), "" when it runs it.
func withoutNodeRestriction(t *topology.Topology) string {
	plugins, set := t.ControlPlane.APIServer.ExtraArgs["enable-admission-plugins"]
	if !set || slices.Contains(strings.Split(plugins, ","), "NodeRestriction") {
		return ""
	}
	return "kube-apiserver's --enable-admission-plugins=" + plugins + " leaves NodeRestriction out in this topology: any kubelet may write any node"
}
