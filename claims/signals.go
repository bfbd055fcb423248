package claims

import (
	"fmt"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
)

// Signals: the series operators watch move with what the suite's pass
// makes happen, on the component that answered, and the shipped alerts
// (config/prometheus/) fire, as the suite's own Prometheus sees them.
const Signals Kind = "signals"

// What a signals cell expects.
const (
	// Counted: the series rose by at least every refusal or rejection the
	// pass saw in the component's own words.
	Counted = "counted every one"
	// Fired: the alert was silent at the pass's start and fired during it.
	Fired = "fired"
)

// The edges of signals cells: the component whose series a cell reads.
const (
	SignalsScheduler  = "kube-scheduler"
	SignalsAPIServers = "kube-apiserver"
	SignalsAlerts     = "prometheus"
)

// Alert names of config/prometheus/ndfq.rules.yaml the cells watch.
const (
	AlertSchedulerRefusals  = "NodeDeclaredFeaturesSchedulerRefusals"
	AlertValidatorRejection = "NodeDeclaredFeaturesValidatorRejections"
	AlertKubeletRejections  = "NodeDeclaredFeaturesKubeletRejections"
)

// AlertFeature is the feature of an alert's cell.
func AlertFeature(alert string) string { return "alert " + alert }

var signalsRow = Row{
	Kind: Signals, Observed: AroundPass,
	Claim: "for every refusal, rejection and kubelet rejection of the suite's pass the upstream series rose on the component that answered, and the shipped alert fired; both were silent before",
	Pool: func(p PoolContext) []Cell {
		c := p.Cell(Signals, fixtures.SignalKubeletRejections.Name)
		if expecting(kubeletAdmissionRow.Pool(p), KubeletRejected) == 0 {
			c.NotApplicable = "no kubelet-admission cell of this pool expects a rejection: nothing for its kubelets to count"
		} else {
			c.Expect = Counted
		}
		return []Cell{c}
	},
	Edges: func(t *topology.Topology) []Cell {
		refusals, rejections, kubelet := 0, 0, 0
		for _, p := range poolContexts(t) {
			refusals += expecting(placementRow.Pool(p), Refused)
			rejections += expecting(updateRow.Pool(p), Rejected)
			kubelet += expecting(kubeletAdmissionRow.Pool(p), KubeletRejected)
		}
		edge := func(pool, feature, expect string, n int, none string) Cell {
			c := Cell{Kind: Signals, Pool: pool, Feature: feature, Expect: expect}
			if n == 0 {
				c.Expect, c.NotApplicable = "", none
			}
			return c
		}
		const noRefusal = "no placement cell of this topology expects the plugin's refusal"
		const noRejection = "no update cell of this topology expects the validator's rejection"
		const noKubelet = "no kubelet-admission cell of this topology expects a rejection"
		return []Cell{
			edge(SignalsScheduler, fixtures.SignalSchedulerRefusals.Name, Counted, refusals, noRefusal),
			edge(SignalsAPIServers, fixtures.SignalValidatorRejections.Name, Counted, rejections, noRejection),
			edge(SignalsAlerts, AlertFeature(AlertSchedulerRefusals), Fired, refusals, noRefusal),
			edge(SignalsAlerts, AlertFeature(AlertValidatorRejection), Fired, rejections, noRejection),
			edge(SignalsAlerts, AlertFeature(AlertKubeletRejections), Fired, kubelet, noKubelet),
		}
	},
}

// expecting counts the cells that apply and expect want.
func expecting(cells []Cell, want string) int {
	n := 0
	for _, c := range cells {
		if c.Applies() && c.Expect == want {
			n++
		}
	}
	return n
}

// CountedSeen is a signals observation in a cell's words: Counted where
// the series rose from from to to by at least want, or what fell short.
func CountedSeen(from, to float64, want int) string {
	if want > 0 && to-from >= float64(want) {
		return Counted
	}
	return fmt.Sprintf("rose from %g to %g where the pass saw %d", from, to, want)
}

// HeldSeen is CountedSeen for a gauge of what waits now (the scheduler's
// unschedulable pods): its highest during the pass must hold every
// refused pod, which all still wait at its end.
func HeldSeen(peak float64, want int) string {
	if want > 0 && peak >= float64(want) {
		return Counted
	}
	return fmt.Sprintf("held at most %g where %d refused pods of the pass waited", peak, want)
}
