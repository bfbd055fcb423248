package claims

import "github.com/ndfq/ndfq/clusters/topology"

// StaleAlert: the shipped alert on stale declarations is silent before the
// stale-kubelet wave and fires while its kubelets are stopped, naming
// their pools: the declarations the scheduler still reads are no longer
// vouched for by a running kubelet, and an operator hears of it.
const StaleAlert Kind = "stale-alert"

// AlertStaleDeclarations is the alert of config/prometheus/ndfq.rules.yaml
// the cell watches (on the exporter's ndfq_nodes_lease_stale).
const AlertStaleDeclarations = "NodeDeclaredFeaturesStaleDeclarations"

var staleAlertRow = Row{
	Kind: StaleAlert, Observed: InWave,
	Claim: "the shipped alert " + AlertStaleDeclarations + " was silent before the stale-kubelet wave and fired, for the stopped pools, while their kubelets were down",
	Edges: func(t *topology.Topology) []Cell {
		c := Cell{Kind: StaleAlert, Pool: SignalsAlerts, Feature: AlertFeature(AlertStaleDeclarations), Expect: Fired}
		if _, why := DropSubjects(t); why != "" {
			c.Expect, c.NotApplicable = "", why+"; so no stale-kubelet wave runs"
		}
		return []Cell{c}
	},
}
