package claims

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
)

// APIServerSignals: behind one address, each apiserver of an HA control
// plane counts the validator's rejections it answered in its own series,
// so the dashboard that splits the rejections by apiserver points at the
// one that rejected (and, in a rolling change, at the one that did not).
const APIServerSignals Kind = "apiserver-signals"

// CountedWhereAnswered: each apiserver's series rose by exactly the
// rejections sent to it alone.
const CountedWhereAnswered = "counted on the apiserver that answered"

var apiServerSignalsRow = Row{
	Kind: APIServerSignals, Observed: BySpec,
	Claim: "each apiserver of an HA control plane counts in its own " + fixtures.SignalValidatorRejections.Name + " exactly the validator's rejections it answered",
	Edges: func(t *topology.Topology) []Cell {
		c := Cell{Kind: APIServerSignals, Pool: SignalsAPIServers, Kubelet: string(t.ControlPlaneVersion()), Feature: fixtures.SignalValidatorRejections.Name, Expect: CountedWhereAnswered}
		switch {
		case t.ControlPlaneCount() < 2:
			c.Expect, c.NotApplicable = "", "one control-plane node: one apiserver answers every request, and the signals cell counts its rejections"
		case len(RejectingUpdates(t)) == 0:
			c.Expect, c.NotApplicable = "", "no update cell of this topology expects the validator's rejection: there is nothing to attribute"
		}
		return []Cell{c}
	},
}

// RejectingUpdates are the update cells that apply and expect the
// validator's rejection.
func RejectingUpdates(t *topology.Topology) []Cell {
	var out []Cell
	for _, p := range poolContexts(t) {
		for _, c := range updateRow.Pool(p) {
			if c.Applies() && c.Expect == Rejected {
				out = append(out, c)
			}
		}
	}
	return out
}

// CountedWhereAnsweredSeen is an apiserver-signals observation in a cell's
// words: each apiserver (its scrape instance) was sent its own number of
// rejected updates, and its series must have risen by exactly that many;
// else every apiserver whose rise differs, by name.
func CountedWhereAnsweredSeen(sent map[string]int, rose map[string]float64) string {
	if len(sent) < 2 {
		return fmt.Sprintf("rejections were sent to %d apiservers: nothing to attribute", len(sent))
	}
	var wrong []string
	for _, a := range slices.Sorted(maps.Keys(sent)) {
		if rose[a] != float64(sent[a]) {
			wrong = append(wrong, fmt.Sprintf("%s rose by %g where it rejected %d", a, rose[a], sent[a]))
		}
	}
	for _, a := range slices.Sorted(maps.Keys(rose)) {
		if _, ok := sent[a]; !ok && rose[a] != 0 {
			wrong = append(wrong, fmt.Sprintf("%s, sent nothing, rose by %g", a, rose[a]))
		}
	}
	if len(wrong) > 0 {
		return strings.Join(wrong, "; ")
	}
	return CountedWhereAnswered
}
