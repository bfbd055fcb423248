package claims

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
)

// ForeignSignals: a pod update rejected by something other than the
// validator (a ValidatingAdmissionPolicy here) is counted in the answering
// component's own series and never in the validator's, so the shipped
// rules, which read the validator's, stay silent for it.
const ForeignSignals Kind = "foreign-signals"

// CountedApart: the foreign series rose by every foreign rejection seen in
// the policy's words, and the validator's did not move.
const CountedApart = "counted apart from the validator's"

// ForeignPolicyPlugin is the admission plugin that answers for the cell.
const ForeignPolicyPlugin = "ValidatingAdmissionPolicy"

var foreignSignalsRow = Row{
	Kind: ForeignSignals, Observed: BySpec,
	Claim: "a ValidatingAdmissionPolicy's rejection of a pod update rises in its own series, apiserver_validating_admission_policy_check_total, and leaves the validator's rejection counter where it was",
	Edges: func(t *topology.Topology) []Cell {
		c := Cell{Kind: ForeignSignals, Pool: SignalsAPIServers, Kubelet: string(t.ControlPlaneVersion()), Feature: fixtures.SignalPolicyRejections.Name, Expect: CountedApart}
		if len(RejectingUpdates(t)) == 0 {
			c.Expect, c.NotApplicable = "", "no update cell of this topology expects the validator's rejection: there is no validator's answer to tell a foreign one apart from"
		} else if slices.Contains(strings.Split(t.ControlPlane.APIServer.ExtraArgs["disable-admission-plugins"], ","), ForeignPolicyPlugin) {
			c.Expect, c.NotApplicable = "", "kube-apiserver runs with --disable-admission-plugins="+ForeignPolicyPlugin+": no policy can answer"
		}
		return []Cell{c}
	},
}

// CountedApartSeen is a foreign-signals observation in a cell's words:
// CountedApart where the foreign series rose by at least every denial and
// the validator's by nothing, or what went otherwise.
func CountedApartSeen(foreignRise, validatorRise float64, denied int) string {
	switch {
	case denied == 0:
		return "no update was denied: nothing to count"
	case validatorRise != 0:
		return fmt.Sprintf("the validator's rejection counter rose by %g while only the policy denied (%d)", validatorRise, denied)
	case foreignRise < float64(denied):
		return fmt.Sprintf("the policy's series rose by %g where it denied %d", foreignRise, denied)
	}
	return CountedApart
}
