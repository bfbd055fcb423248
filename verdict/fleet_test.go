package verdict

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/probes"
)

// A fleet intent names pools by selector, sizes as ranges of any size,
// kubelet minors, and no control-plane pool: a managed fleet of 1,050
// nodes in 5 pools, two of them over 300, is GO as planned and HOLD
// intent-mismatch naming the pool whose minor differs.
const fleet = `apiVersion: ndfq.io/v1alpha1
kind: FleetIntent
pools:
  - name: general
    selector: cloud.google.com/gke-nodepool=general
    nodes: {min: 300}
    kubelet: {versions: ["1.37"]}
  - name: batch
    selector: cloud.google.com/gke-nodepool=batch
    nodes: {min: 300, max: 400}
    kubelet: {versions: ["1.37"]}
  - name: legacy
    selector: cloud.google.com/gke-nodepool=legacy
    nodes: {count: 150}
    kubelet: {versions: ["1.35"]}
  - name: gpu
    selector: cloud.google.com/gke-nodepool=gpu
    nodes: {min: 100}
    kubelet: {versions: ["1.36", "1.37"]}
  - name: spot
    selector: cloud.google.com/gke-nodepool=spot,cloud.google.com/gke-spot=true
    nodes: {min: 1}
    kubelet: {versions: ["1.36.3"]}
`

// fleetRun is what a probe of that fleet reads: each node declaring what
// its kubelet (default gates, an unknown runtime) must.
func fleetRun(sizes map[string]int, minors map[string]string) *probes.Run {
	r := soundRun()
	r.Declarations = nil
	for _, pool := range []string{"general", "batch", "legacy", "gpu", "spot"} {
		version := map[string]string{"1.37": "v1.37.2", "1.36": "v1.36.3", "1.35": "v1.35.4"}[minors[pool]]
		k := fixtures.Kubelet{Version: version}
		labels := map[string]string{"cloud.google.com/gke-nodepool": pool}
		if pool == "spot" {
			labels["cloud.google.com/gke-spot"] = "true"
		}
		for i := range sizes[pool] {
			r.Declarations = append(r.Declarations, probes.Declaration{Node: fmt.Sprintf("%s-%d", pool, i), Pool: pool, Labels: labels,
				KubeletVersion: version, Published: true, Declared: k.MustDeclare(), Expected: k.MustDeclare(), HeartbeatAge: time.Second})
		}
	}
	return r
}

func TestFleetIntentOfAnySize(t *testing.T) {
	in, err := ParseFleetIntent("fleet.yaml", []byte(fleet))
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[string]int{"general": 350, "batch": 320, "legacy": 150, "gpu": 200, "spot": 30}
	minors := map[string]string{"general": "1.37", "batch": "1.37", "legacy": "1.35", "gpu": "1.36", "spot": "1.36"}
	g := Evaluate(fleetRun(sizes, minors), Policy{Thresholds: DefaultThresholds, Intent: in})
	if len(fleetRun(sizes, minors).Declarations) < 1000 || g.Holds(IntentMismatch, "", "") {
		t.Fatalf("the fleet as planned: %v", g.Reasons)
	}
	minors["legacy"] = "1.36"
	g = Evaluate(fleetRun(sizes, minors), Policy{Thresholds: DefaultThresholds, Intent: in})
	if !g.Holds(IntentMismatch, "legacy", "legacy-0") || !strings.Contains(fmt.Sprint(g.Reasons), "kubelet v1.36.3, the intent plans 1.35.x for pool legacy") || g.Holds(IntentMismatch, "general", "") {
		t.Errorf("legacy's minor changed: %v", g.Reasons)
	}
	minors["legacy"] = "1.35"
	sizes["batch"] = 450
	g = Evaluate(fleetRun(sizes, minors), Policy{Thresholds: DefaultThresholds, Intent: in})
	if !strings.Contains(fmt.Sprint(g.Reasons), "intent-mismatch [batch]: 450 node(s), the intent plans 300 to 400") {
		t.Errorf("batch too large: %v", g.Reasons)
	}
}

// Every field the schema or the oracle refuses is named, before anything
// connects.
func TestFleetIntentRefusesBadFields(t *testing.T) {
	for want, doc := range map[string]string{
		"additional properties 'nodez' not allowed":                                                    "apiVersion: ndfq.io/v1alpha1\nkind: FleetIntent\npools: [{name: a, nodez: {count: 1}, nodes: {count: 1}, kubelet: {versions: ['1.37']}}]\n",
		"pools[0] (a).kubelet.versions[0]: ndfq has no oracle for Kubernetes 1.99":                     "apiVersion: ndfq.io/v1alpha1\nkind: FleetIntent\npools: [{name: a, nodes: {count: 1}, kubelet: {versions: ['1.99']}}]\n",
		"pools[0] (a).kubelet.featureGates: for 1.37: unrecognized feature gate: NodeDeclaredFeaturez": "apiVersion: ndfq.io/v1alpha1\nkind: FleetIntent\npools: [{name: a, nodes: {count: 1}, kubelet: {versions: ['1.37'], featureGates: {NodeDeclaredFeaturez: true}}}]\n",
		"pools[0] (a).selector: ":                                                                    "apiVersion: ndfq.io/v1alpha1\nkind: FleetIntent\npools: [{name: a, selector: 'a in (b', nodes: {count: 1}, kubelet: {versions: ['1.37']}}]\n",
		"pools[0] (a).nodes.max: 2 is below min 5":                                                   "apiVersion: ndfq.io/v1alpha1\nkind: FleetIntent\npools: [{name: a, nodes: {min: 5, max: 2}, kubelet: {versions: ['1.37']}}]\n",
		"pools[1] (a).name: \"a\" is given twice":                                                    "apiVersion: ndfq.io/v1alpha1\nkind: FleetIntent\npools: [{name: a, nodes: {count: 1}, kubelet: {versions: ['1.37']}}, {name: a, nodes: {count: 1}, kubelet: {versions: ['1.37']}}]\n",
		"pools[0] (a).kubelet.runtime: unknown runtime \"crio\"":                                     "apiVersion: ndfq.io/v1alpha1\nkind: FleetIntent\npools: [{name: a, nodes: {count: 1}, kubelet: {versions: ['1.37'], runtime: crio}}]\n",
		"controlPlane.apiServer.featureGates: cannot set feature gate NodeDeclaredFeatures to false": "apiVersion: ndfq.io/v1alpha1\nkind: FleetIntent\ncontrolPlane: {version: 1.37.2, apiServer: {featureGates: {NodeDeclaredFeatures: false}}}\npools: [{name: a, nodes: {count: 1}, kubelet: {versions: ['1.37']}}]\n",
		"'/pools/0/nodes'": "apiVersion: ndfq.io/v1alpha1\nkind: FleetIntent\npools: [{name: a, nodes: {max: 3}, kubelet: {versions: ['1.37']}}]\n",
	} {
		_, err := ParseFleetIntent("f.yaml", []byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q, got %v", want, err)
		}
	}
}
