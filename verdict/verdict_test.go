package verdict

import (
	"encoding/xml"

	"bytes"
	"encoding/json"
	"fmt"
	"github.com/onsi/ginkgo/v2/reporters"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/probes"
)

// policy judges by the default thresholds, nothing more.
var policy = Policy{Thresholds: DefaultThresholds}

// pluginRefusal is a 1.37 scheduler's refusal in the plugin's words.
const pluginRefusal = "0/2 nodes are available: 1 node(s) didn't match Pod's required features, 1 node(s) didn't match Pod's node affinity/selector."

func soundRun() *probes.Run {
	on := probes.Gates{"NodeDeclaredFeatures": {Enabled: true}}
	return &probes.Run{
		ServerVersion: "v1.37.2", APIServer: on, Scheduler: on, Took: 20 * time.Second,
		PoolLabel: probes.PoolLabelChoice{Label: "ndfq.io/pool", Source: "well-known"}, Image: "registry.k8s.io/pause:3.10.2", Namespace: "ndfq-probe-x",
		Declarations: []probes.Declaration{
			{Node: "a1", Pool: "a", KubeletVersion: "v1.37.2", Published: true, Declared: []string{"X"}, Expected: []string{"X"}, Digest: "0123456789ab", Gates: on, HeartbeatAge: time.Second},
			{Node: "b1", Pool: "b", KubeletVersion: "v1.34.4", Digest: "e3b0c44298fc", Gates: probes.Gates{}, HeartbeatAge: time.Second},
		},
		Placements: []probes.PoolProbe{
			{Pool: "a", Declares: true, Bound: true, Decision: time.Second},
			{Pool: "a", Feature: "X", Declares: true, Bound: true, Decision: time.Second},
			{Pool: "b", Declares: true, Bound: true, Decision: time.Second},
			{Pool: "b", Feature: "X", Declares: false, Bound: false, Decision: 2 * time.Second, Message: pluginRefusal},
		},
		Updates: []probes.PoolUpdate{
			{Pool: "a", Pod: "u-a", Node: "a1", Feature: "Y", Declares: true, Code: 200},
			{Pool: "b", Pod: "u-b", Node: "b1", Feature: "Y", Code: 403, Message: fixtures.UpdateRejection("u-b", "Y", "b1")},
		},
		NodeWrites: probes.NodeWrites{As: "a1", Own: &probes.UpdateResult{Node: "a1", Code: 200},
			Other: &probes.UpdateResult{Node: "b1", Code: 403, Message: fixtures.NodeRestrictionRefusal("a1", "b1")}},
	}
}

func TestSoundRunIsGO(t *testing.T) {
	r := soundRun()
	// A ResourceSlice write the validator refuses in its words counts as its rejection.
	r.Updates = append(r.Updates, probes.PoolUpdate{Pool: "b", Kind: probes.SliceKind, Pod: "ndfq-x-rs-b-1", Node: "b1", Feature: "DRANodeAllocatableResources",
		Code: 403, Message: fixtures.SliceRejection("ndfq-x-rs-b-1", "b1")})
	g := Evaluate(r, policy)
	if g.Outcome != GO || len(g.Reasons) != 0 {
		t.Fatalf("verdict %s reasons %v", g.Outcome, g.Reasons)
	}
	if g.Pools[1].Refusals != 1 || g.Pools[1].Rejections != 2 {
		t.Errorf("pool b %+v", g.Pools[1])
	}
}

// Each stop condition must turn the verdict to HOLD and name the node or pool.
func TestStopConditions(t *testing.T) {
	cases := map[string]func(r *probes.Run){
		"declared-but-not-enabled [b/b1]":    func(r *probes.Run) { r.Declarations[1].Extra = []string{"X"} },
		"missing-report [a/a1]":              func(r *probes.Run) { r.Declarations[0].Missing = []string{"X"} },
		"stale-declarations [a/a1]":          func(r *probes.Run) { r.Declarations[0].HeartbeatAge = time.Hour },
		"kubelet-unreachable [a/a1]":         func(r *probes.Run) { r.Declarations[0].Unreachable = "connection refused" },
		"unexpected-admission [b/":           func(r *probes.Run) { r.Placements[3].Bound = true; r.Placements[3].Node = "b1" },
		"unexpected-refusal [a]":             func(r *probes.Run) { r.Placements[1].Bound = false },
		"unexpected-update-admission [b/b1]": func(r *probes.Run) { r.Updates[1].Code = 200 },
		"unexpected-update-rejection [a]":    func(r *probes.Run) { r.Updates[0].Code = 403 },
		"foreign-node-write [b/b1]":          func(r *probes.Run) { r.NodeWrites.Other.Code, r.NodeWrites.Other.Message = 200, "" },
		// NodeRestriction off on one apiserver of two: the cluster's address reached the other.
		"foreign-node-write [b/b1]: as system:node:a1, a dry-run write of b1's status.declaredFeatures through apiserver https://10.0.0.2:6443 was admitted": func(r *probes.Run) {
			r.NodeWrites.OtherAt = map[string]*probes.UpdateResult{"https://10.0.0.1:6443": r.NodeWrites.Other, "https://10.0.0.2:6443": {Node: "b1", Code: 200}}
		},
		"scheduler-latency [a]":         func(r *probes.Run) { r.Placements[1].Decision = time.Minute },
		"gate-fingerprint []":           func(r *probes.Run) { r.Scheduler = probes.Gates{"NodeDeclaredFeatures": {Enabled: false}} },
		"rollout-order [control-plane]": func(r *probes.Run) { r.APIServer = probes.Gates{"NodeDeclaredFeatures": {Enabled: false}} },
		"gate-fingerprint [control-plane]: the 2 kube-apiservers behind the cluster's address disagree on InPlacePodLevelResourcesVerticalScaling: on (BETA) at https://10.0.0.1:6443; off (BETA) at https://10.0.0.2:6443": func(r *probes.Run) {
			r.APIServers = map[string]probes.Gates{
				"https://10.0.0.1:6443": {"NodeDeclaredFeatures": {Enabled: true}, "InPlacePodLevelResourcesVerticalScaling": {Enabled: true, Stage: "BETA"}},
				"https://10.0.0.2:6443": {"NodeDeclaredFeatures": {Enabled: true}, "InPlacePodLevelResourcesVerticalScaling": {Enabled: false, Stage: "BETA"}},
			}
		},
		"scheduler-ignores-declarations [b/b1]: scheduler no-ndf bound a pod needing X to node b1": func(r *probes.Run) {
			r.Schedulers = []string{"no-ndf"}
			r.Placements = append(r.Placements, probes.PoolProbe{Pool: "b", Scheduler: "no-ndf", Feature: "X", Bound: true, Node: "b1"})
		},
		"foreign-refusal [b]: scheduler other refused a pod needing X, not in the NodeDeclaredFeatures plugin's words": func(r *probes.Run) {
			r.Schedulers = []string{"other"}
			r.Placements = append(r.Placements, probes.PoolProbe{Pool: "b", Scheduler: "other", Feature: "X", Message: "0/2 nodes are available: 2 node(s) had untolerated taint {gpu: }."})
		},
		"streaming-route [b/b1]: an exec into a pod on b1, which does not declare ExtendWebSocketsToKubelet, was proxied_to_kubelet, not translated_at_apiserver": func(r *probes.Run) {
			r.APIServer["ExtendWebSocketsToKubelet"] = probes.GateState{Enabled: true, Stage: "BETA"}
			r.Routes = []probes.PoolRoute{{Pool: "a", Node: "a1", Declares: true, Route: "proxied_to_kubelet"}, {Pool: "b", Node: "b1", Route: "proxied_to_kubelet"}}
		},
		"unexpected-update-admission [b/b1]: an update needing DRANodeAllocatableResources was admitted": func(r *probes.Run) {
			r.Updates = append(r.Updates, probes.PoolUpdate{Pool: "b", Kind: probes.SliceKind, Pod: "ndfq-x-rs-b-1", Node: "b1", Feature: "DRANodeAllocatableResources", Code: 201})
		},
		"unexpected-update-rejection [a]: an update needing \"DRANodeAllocatableResources\" was answered 201, but the apiserver dropped its nodeAllocatableResources (nothing was judged)": func(r *probes.Run) {
			r.Updates = append(r.Updates, probes.PoolUpdate{Pool: "a", Kind: probes.SliceKind, Pod: "ndfq-x-rs-a-1", Node: "a1", Feature: "DRANodeAllocatableResources", Declares: true, Code: 201, Dropped: "nodeAllocatableResources"})
		},
		"unexpected-refusal [a]: scheduler other refused": func(r *probes.Run) {
			r.Placements = append(r.Placements, probes.PoolProbe{Pool: "a", Scheduler: "other", Feature: "X", Declares: true, Message: "no"})
		},
		"rollout-order [a/a1]: kubelet v1.37.2 has NodeDeclaredFeatures on while kube-apiserver has it off (the apiserver stored [X] anyway)": func(r *probes.Run) {
			off := probes.Gates{"NodeDeclaredFeatures": {Enabled: false}}
			r.APIServer, r.Scheduler = off, off
		},
	}
	for want, breakIt := range cases {
		r := soundRun()
		breakIt(r)
		g := Evaluate(r, policy)
		var text bytes.Buffer
		_ = g.WriteText(&text)
		if g.Outcome != HOLD || !strings.Contains(text.String(), "HOLD: "+want) {
			t.Errorf("%s: verdict %s\n%s", want, g.Outcome, text.String())
		}
	}
}

// Apiservers that agree raise nothing; one that could not be read is a
// check not made, named.
func TestEveryAPIServerRead(t *testing.T) {
	r := soundRun()
	on := probes.Gates{"NodeDeclaredFeatures": {Enabled: true}}
	// GA on one, beta on the other, and a gate one does not know: still agreeing (on, on; off, off).
	r.APIServers = map[string]probes.Gates{"https://10.0.0.1:6443": on, "https://10.0.0.2:6443": {
		"NodeDeclaredFeatures":   {Enabled: true, Stage: "BETA"},
		"VolumeBindMountOptions": {Enabled: false, Stage: "ALPHA"},
	}}
	g := Evaluate(r, policy)
	if g.Outcome != GO || g.Fingerprint["kube-apiserver at https://10.0.0.2:6443"] != "on (BETA)" {
		t.Errorf("agreeing apiservers: %s %v %v", g.Outcome, g.Reasons, g.Fingerprint)
	}
	r.APIServersUnchecked = "1 of 2 apiservers could not be read"
	g = Evaluate(r, policy)
	if g.Outcome != INCOMPLETE || len(g.Unchecked) != 1 || g.Unchecked[0].Check != "apiserver-gates" {
		t.Errorf("unread apiserver: %s %v", g.Outcome, g.Unchecked)
	}
}

func TestJSONMatchesSchema(t *testing.T) {
	for _, r := range []*probes.Run{soundRun(), func() *probes.Run { r := soundRun(); r.Declarations[0].HeartbeatAge = time.Hour; return r }()} {
		var buf bytes.Buffer
		if err := Evaluate(r, policy).WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		if err := ValidateProbeJSON(buf.Bytes()); err != nil {
			t.Errorf("report does not match probe.schema.json: %v\n%s", err, buf.String())
		}
	}
	if err := ValidateProbeJSON([]byte(`{"verdict":"MAYBE"}`)); err == nil {
		t.Error("the schema must refuse a bad verdict")
	}
}

func TestSVGNamesEveryPool(t *testing.T) {
	var buf bytes.Buffer
	g := Evaluate(soundRun(), policy)
	if err := g.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	s := buf.String()
	if !strings.HasPrefix(s, "<svg") || !strings.Contains(s, ">a</text>") || !strings.Contains(s, "1 refused, 1 rejected") || !strings.HasSuffix(s, "</svg>\n") {
		t.Errorf("svg:\n%s", s)
	}
}

func TestSchemaNamesEveryCondition(t *testing.T) {
	var doc struct {
		Properties struct {
			Reasons struct {
				Items struct {
					Properties struct {
						Condition struct {
							Enum []Condition `json:"enum"`
						} `json:"condition"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"reasons"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(ProbeSchema, &doc); err != nil {
		t.Fatal(err)
	}
	got := doc.Properties.Reasons.Items.Properties.Condition.Enum
	slices.Sort(got)
	want := slices.Sorted(slices.Values(Conditions))
	if !slices.Equal(got, want) {
		t.Errorf("probe.schema.json conditions %v, the Go constants %v", got, want)
	}
}

func TestHoldsAndFired(t *testing.T) {
	r := soundRun()
	r.Declarations[0].HeartbeatAge = time.Hour
	r.Declarations[1].Extra = []string{"X"}
	g := Evaluate(r, policy)
	if !g.Holds(StaleDeclarations, "a", "a1") || g.Holds(StaleDeclarations, "b", "") || !g.Holds(DeclaredButNotEnabled, "", "b1") {
		t.Errorf("Holds: %v", g.Reasons)
	}
	if got := g.Fired(); !slices.Equal(got, []Condition{DeclaredButNotEnabled, StaleDeclarations}) {
		t.Errorf("Fired = %v", got)
	}
}

// The plan of soundRun's fleet: pool a runs 1.37 kubelets whose oracle set
// is what a1 declares; pool b runs 1.34 kubelets that declare nothing.
func soundIntent() *Intent {
	return &Intent{Pools: map[string]IntentPool{
		"a": {Min: 1, Max: 1, Kubelets: []fixtures.Kubelet{{Version: "1.37.2"}}},
		"b": {Min: 1, Max: 1, Kubelets: []fixtures.Kubelet{{Version: "1.34.4"}}},
	}}
}

func intentRun() *probes.Run {
	r := soundRun()
	a := fixtures.Kubelet{Version: "1.37.2"}
	r.Declarations[0].Declared = a.MustDeclare()
	r.Declarations[0].Gates = probes.Gates{}
	for g, on := range fixtures.EffectiveGates("1.37", nil) {
		r.Declarations[0].Gates[g] = probes.GateState{Enabled: on}
	}
	return r
}

func TestIntent(t *testing.T) {
	g := Evaluate(intentRun(), Policy{Thresholds: DefaultThresholds, Intent: soundIntent()})
	if g.Outcome != GO {
		t.Fatalf("the fleet as planned: %s %v", g.Outcome, g.Reasons)
	}
	// The kubelet of a1 runs RestartAllContainers off (its config file, say)
	// and declares consistently with that: only the intent catches it.
	drift := intentRun()
	d := &drift.Declarations[0]
	d.Gates[fixtures.RestartAllContainersOnContainerExits] = probes.GateState{Enabled: false}
	d.Declared = slices.DeleteFunc(slices.Clone(d.Declared), func(f string) bool { return f == fixtures.RestartAllContainersOnContainerExits })
	g = Evaluate(drift, policy)
	if g.Outcome != GO {
		t.Fatalf("without the intent the drift is invisible, which is why --intent exists: %v", g.Reasons)
	}
	g = Evaluate(drift, Policy{Thresholds: DefaultThresholds, Intent: soundIntent()})
	text := fmt.Sprint(g.Reasons)
	for _, want := range []string{
		"intent-mismatch [a/a1]: gate RestartAllContainersOnContainerExits: the intent plans true, the kubelet reports off",
		"intent-mismatch [a/a1]: feature RestartAllContainersOnContainerExits: the intent's kubelet declares it, the node does not",
	} {
		if g.Outcome != HOLD || !strings.Contains(text, want) {
			t.Errorf("want %q in %s %s", want, g.Outcome, text)
		}
	}
	a := soundIntent().Pools["a"]
	for want, pools := range map[string]map[string]IntentPool{
		"the node is in no pool of the intent (it plans [a])":    {"a": a},
		"kubelet v1.34.4, the intent plans v1.35.4 for pool b":   {"a": a, "b": {Min: 1, Max: 1, Kubelets: []fixtures.Kubelet{{Version: "1.35.4"}}}},
		"1 node(s), the intent plans 2":                          {"a": a, "b": {Min: 2, Max: 2, Kubelets: []fixtures.Kubelet{{Version: "1.34.4"}}}},
		"1 node(s), the intent plans at least 300":               {"a": a, "b": {Min: 300, Kubelets: []fixtures.Kubelet{{Version: "1.34"}}}},
		"kubelet v1.34.4, the intent plans 1.35.x or 1.36.x for": {"a": a, "b": {Min: 1, Kubelets: []fixtures.Kubelet{{Version: "1.35"}, {Version: "1.36"}}}},
	} {
		g := Evaluate(intentRun(), Policy{Thresholds: DefaultThresholds, Intent: &Intent{Pools: pools}})
		if g.Outcome != HOLD || !strings.Contains(fmt.Sprint(g.Reasons), want) || !g.Holds(IntentMismatch, "b", "") {
			t.Errorf("want %q: %s %v", want, g.Outcome, g.Reasons)
		}
	}
}

// A check the probe could not make is INCOMPLETE, never GO; a reason that
// holds still wins (issue 12).
func TestUncheckedIsIncomplete(t *testing.T) {
	// The plugin's refusal seen is the scheduler checked by its behaviour.
	run := soundRun()
	run.Scheduler = nil
	if g := Evaluate(run, policy); g.Outcome != GO || g.Fingerprint["kube-scheduler"] != SchedulerSeenRefusing {
		t.Errorf("plugin refusal seen: %s %v %v", g.Outcome, g.Unchecked, g.Fingerprint)
	}
	// No metrics and no refusal: whether the scheduler runs the plugin is unchecked.
	quiet := soundRun()
	quiet.Scheduler = nil
	quiet.Placements[3] = probes.PoolProbe{Pool: "b", Feature: "X", Declares: true, Bound: true, Node: "b1", Decision: time.Second}
	g := Evaluate(quiet, policy)
	var text strings.Builder
	_ = g.WriteText(&text)
	if g.Outcome != INCOMPLETE || !strings.Contains(text.String(), "NOT CHECKED: scheduler-gates [control-plane]: kube-scheduler's gates were not read") {
		t.Errorf("no scheduler gates: %s\n%s", g.Outcome, text.String())
	}
	run.APIServer = probes.Gates{"NodeDeclaredFeatures": {Enabled: false}}
	if g := Evaluate(run, policy); !g.Holds(RolloutOrder, "control-plane", "") {
		t.Errorf("plugin refusing while the apiserver has the gate off: %v", g.Reasons)
	}
	run = soundRun()
	run.Unprobed = []string{"b"}
	if g := Evaluate(run, policy); g.Outcome != INCOMPLETE || len(g.Unchecked) != 1 || g.Unchecked[0].Pool != "b" {
		t.Errorf("unprobed pool: %s %v", g.Outcome, g.Unchecked)
	}
	run.Declarations[1].HeartbeatAge = time.Hour
	if g := Evaluate(run, policy); g.Outcome != HOLD || !g.Holds(StaleDeclarations, "b", "b1") {
		t.Errorf("stale and unprobed: %s %v", g.Outcome, g.Reasons)
	}
}

// The report a pipeline reads: identity, time, thresholds, every node's
// set, decision times in seconds, and [] (never null) for empty lists; YAML
// carries the same document.
func TestReportForPipelines(t *testing.T) {
	run := soundRun()
	run.Started = time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC)
	g := Evaluate(run, policy)
	var js, ym strings.Builder
	if err := g.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"apiVersion": "ndfq.io/v1alpha1"`, `"kind": "ProbeReport"`, `"time": "2026-12-03T14:00:00Z"`, `"reasons": []`, `"unchecked": []`,
		`"freshnessSeconds": 40`, `"probeDecisionP50Seconds": 1`, `"controlDecisionP50Seconds": 1`, `"node": "b1"`, `"declared": []`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("JSON lacks %s:\n%s", want, js.String())
		}
	}
	if err := ValidateProbeJSON([]byte(js.String())); err != nil {
		t.Errorf("schema: %v", err)
	}
	if err := g.WriteYAML(&ym); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"apiVersion: ndfq.io/v1alpha1", "kind: ProbeReport", "reasons: []", "verdict: GO"} {
		if !strings.Contains(ym.String(), want) {
			t.Errorf("YAML lacks %s:\n%s", want, ym.String())
		}
	}
}

// A second scheduler that refuses what the pool lacks in the plugin's
// words holds nothing and does not count as the default scheduler's
// refusal (in other words it is foreign-refusal: TestStopConditions).
func TestSecondSchedulerThatRefuses(t *testing.T) {
	r := soundRun()
	r.Schedulers = []string{"with-plugin"}
	r.Placements = append(r.Placements, probes.PoolProbe{Pool: "b", Scheduler: "with-plugin", Feature: "X", Decision: time.Minute, Message: pluginRefusal})
	g := Evaluate(r, policy)
	if g.Outcome != GO || g.Pools[1].Refusals != 1 {
		t.Errorf("verdict %s reasons %v pool b %+v", g.Outcome, g.Reasons, g.Pools[1])
	}
}

// Without nodes/proxy the kubelet checks are not made: INCOMPLETE naming
// them (no kubelet-unreachable), HOLD check-not-made with --hold-unchecked.
func TestKubeletChecksNotMade(t *testing.T) {
	r := soundRun()
	r.KubeletUnchecked = "the identity may not get nodes/proxy"
	for i := range r.Declarations {
		r.Declarations[i].Unchecked, r.Declarations[i].Gates, r.Declarations[i].Expected = r.KubeletUnchecked, nil, nil
	}
	g := Evaluate(r, policy)
	if g.Outcome != INCOMPLETE || len(g.Unchecked) != 1 || g.Unchecked[0].Check != "kubelet-gates" || g.Pools[0].KubeletGate != "not read" {
		t.Errorf("verdict %s unchecked %v reasons %v pool %+v", g.Outcome, g.Unchecked, g.Reasons, g.Pools[0])
	}
	g = Evaluate(r, Policy{Thresholds: DefaultThresholds, HoldUnchecked: true})
	if g.Outcome != HOLD || !g.Holds(CheckNotMade, "", "") {
		t.Errorf("--hold-unchecked: %s %v", g.Outcome, g.Reasons)
	}
}

// JUnit: one case per pool × condition, failed where it fired, failed as
// "unchecked" where a check that applies was not made (a pipeline gating
// on JUnit must not read INCOMPLETE as GO), skipped with the reason where
// it does not apply; the closing count reads it.
func TestJUnit(t *testing.T) {
	r := soundRun()
	r.Declarations[1].Extra = []string{"X"}
	r.Unprobed = []string{"a"}
	g := Evaluate(r, policy)
	var out strings.Builder
	if err := g.WriteJUnit(&out); err != nil {
		t.Fatal(err)
	}
	doc := out.String()
	for _, want := range []string{
		`<testcase name="declared-but-not-enabled [b]" classname="ndfq.probe.b" status="failed"`,
		`<testcase name="unexpected-refusal [a]" classname="ndfq.probe.a" status="failed"`,
		`<failure message="not checked - placement-and-updates [a]: every node of the pool is stale`,
		`type="unchecked"`,
		`<testcase name="unexpected-refusal [b]" classname="ndfq.probe.b" status="passed"`,
		`<testcase name="intent-mismatch [cluster]" classname="ndfq.probe.cluster" status="skipped"`,
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("JUnit lacks %s:\n%s", want, doc)
		}
	}
	var suites reporters.JUnitTestSuites
	if err := xml.Unmarshal([]byte(doc), &suites); err != nil {
		t.Fatal(err)
	}
	// A case per pool and condition, and one per item that leaves none.
	cases := 3*len(Conditions) + len(slices.DeleteFunc(slices.Clone(Items), func(i ItemInfo) bool { return len(i.Leaves) > 0 }))
	// The forged set, and every condition the stale pool leaves unasked but
	// scheduler-ignores-declarations, which no --scheduler-name makes not applicable.
	want := 1 + len(placementAndUpdate) - 1
	if suites.Failures != want || suites.Tests != cases {
		t.Errorf("%d failed of %d, want %d failed of %d", suites.Failures, suites.Tests, want, cases)
	}
}

// A pool's declared set is what all of its nodes declare, not its last node's.
func TestPoolDeclaresWhatEveryNodeDeclares(t *testing.T) {
	r := soundRun()
	r.Declarations = append(r.Declarations, probes.Declaration{Node: "a2", Pool: "a", KubeletVersion: "v1.37.2", Published: true, Declared: []string{"X", "Y"}, Expected: []string{"X", "Y"}, Digest: "ffff", Gates: r.Declarations[0].Gates})
	r.Declarations[0].Declared = []string{"W", "X"}
	g := Evaluate(r, policy)
	if !slices.Equal(g.Pools[0].Declared, []string{"X"}) {
		t.Errorf("pool a declares %v, want [X]", g.Pools[0].Declared)
	}
	if !slices.Equal(g.Nodes[0].Declared, []string{"W", "X"}) {
		t.Errorf("node a1's own set changed: %v", g.Nodes[0].Declared)
	}
}

// Nodes on a runtime ndfq does not know leave its features unchecked: one
// line per pool and runtime, naming the nodes, however many there are.
func TestUnknownRuntimeIsOneLinePerPool(t *testing.T) {
	run := soundRun()
	a1 := run.Declarations[0]
	a1.Runtime, a1.RuntimeFrom, a1.Undecided = "cri-o://1.34.0", probes.RuntimeUnknown, []string{"UserNamespacesHostNetworkSupport"}
	a2 := a1
	a2.Node, a2.Undecided = "a2", []string{"UserNamespacesHostNetworkSupport", "VolumeBindMountOptions"}
	run.Declarations = append([]probes.Declaration{a1, a2}, run.Declarations[1:]...)
	g := Evaluate(run, policy)
	if g.Outcome != INCOMPLETE || len(g.Unchecked) != 1 {
		t.Fatalf("%s %v", g.Outcome, g.Unchecked)
	}
	want := `a1, a2 run "cri-o://1.34.0": whether they must declare [UserNamespacesHostNetworkSupport VolumeBindMountOptions] depends on what that runtime reports over the CRI, and nothing reported it`
	if u := g.Unchecked[0]; u.Check != "runtime-features" || u.Pool != "a" || !strings.HasPrefix(u.Reason, want) {
		t.Errorf("%+v", u)
	}
	if g.Runtimes != "unknown (nothing reported them) on 2 nodes" {
		t.Errorf("runtimes: %q", g.Runtimes)
	}
}

// Where the runtime was read on the node, the unknown version string does
// not matter; what the reader cannot see stays unchecked, saying so, and
// a read that failed is named.
func TestRuntimeReadOnTheNode(t *testing.T) {
	run := soundRun()
	a1 := run.Declarations[0]
	a1.Runtime, a1.RuntimeFrom, a1.RuntimeReport = "cri-o://1.34.0", probes.RuntimeCRI, []string{"userNamespacesHostNetwork"}
	run.Declarations[0] = a1
	g := Evaluate(run, policy)
	if g.Outcome != GO || g.Nodes[0].RuntimeFrom != "cri" || !slices.Equal(g.Nodes[0].RuntimeReport, a1.RuntimeReport) {
		t.Fatalf("%s %v %+v", g.Outcome, g.Unchecked, g.Nodes[0])
	}
	run.Declarations[0].Undecided = []string{"SecurityProfileOCI"}
	if g := Evaluate(run, policy); len(g.Unchecked) != 1 || !strings.Contains(g.Unchecked[0].Reason, probes.CRIUnseen) {
		t.Errorf("%v", g.Unchecked)
	}
	run.Declarations[0].RuntimeFrom, run.Declarations[0].RuntimeUnread = probes.RuntimeUnknown, "its CRI reader pod x exited 1: permission denied"
	if g := Evaluate(run, policy); len(g.Unchecked) != 1 || !strings.Contains(g.Unchecked[0].Reason, "and its CRI reader pod x exited 1: permission denied, so") {
		t.Errorf("%v", g.Unchecked)
	}
}

// The node-write check is unchecked, never passed, where it was not made
// or the refusal was not NodeRestriction's; with one node it does not apply.
func TestNodeWritesNotMade(t *testing.T) {
	cases := map[string]func(r *probes.Run){
		"the identity may not impersonate": func(r *probes.Run) {
			r.NodeWrites = probes.NodeWrites{Unchecked: "the identity may not impersonate users \"system:node:a1\""}
		},
		"answered 403, not by NodeRestriction in its words: denied by policy": func(r *probes.Run) {
			r.NodeWrites.Other.Message = "denied by policy"
		},
		"its own status.declaredFeatures was answered 403": func(r *probes.Run) { r.NodeWrites.Own.Code = 403 },
	}
	for want, mutate := range cases {
		r := soundRun()
		mutate(r)
		g := Evaluate(r, policy)
		if g.Outcome != INCOMPLETE || len(g.Unchecked) != 1 || g.Unchecked[0].Check != ItemNodeWrites || !strings.Contains(g.Unchecked[0].Reason, want) {
			t.Errorf("%s: %s %v %v", want, g.Outcome, g.Reasons, g.Unchecked)
		}
	}
	r := soundRun()
	r.NodeWrites.Other, r.NodeWrites.NotApplicable = nil, "only a1 is in scope: there is no other node to write"
	g := Evaluate(r, policy)
	if g.Outcome != GO || len(g.NotApplicable) != 1 || g.NotApplicable[0].Check != ItemNodeWrites || g.NodeWrites != "" {
		t.Errorf("one node: %s %v %v %q", g.Outcome, g.Unchecked, g.NotApplicable, g.NodeWrites)
	}
	var junit bytes.Buffer
	if err := g.WriteJUnit(&junit); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`name="foreign-node-write \[a\]"[^>]*status="skipped"`).Match(junit.Bytes()) {
		t.Errorf("one node: foreign-node-write must be skipped, not passed:\n%s", junit.String())
	}
}

// A missing feature that the node's runtime decides names the upgrade
// window (the kubelet reads runtime features once); others do not.
func TestMissingReportNamesTheRuntimeWindow(t *testing.T) {
	r := soundRun()
	r.Declarations[0].Runtime, r.Declarations[0].Missing = "containerd://2.4.2", []string{"UserNamespacesHostNetworkSupport"}
	g := Evaluate(r, policy)
	if !g.Holds(MissingReport, "a", "a1") || !strings.Contains(g.Reasons[0].Detail, "kubernetes/kubernetes#138099") {
		t.Errorf("runtime-decided: %v", g.Reasons)
	}
	r.Declarations[0].Missing = []string{"RestartAllContainersOnContainerExits"}
	if g := Evaluate(r, policy); strings.Contains(g.Reasons[0].Detail, "#138099") {
		t.Errorf("gate-decided: %v", g.Reasons)
	}
}

// A fully rolled-out fleet: no pool lacks a feature, so the plugin and
// the validator are seen only on the synthetic node. With it the run is
// GO and says what the node showed; without the grant the two items are
// unchecked, naming it.
func TestFullyRolledOutFleet(t *testing.T) {
	rolledOut := func() *probes.Run {
		r := soundRun()
		r.Placements[3] = probes.PoolProbe{Pool: "b", Feature: "X", Declares: true, Bound: true, Node: "b1", Decision: time.Second}
		r.Updates[1] = probes.PoolUpdate{Pool: "b", Pod: "u-b", Node: "b1", Feature: "Y", Declares: true, Code: 200}
		return r
	}
	r := rolledOut()
	r.Synthetic = probes.Synthetic{Needed: []string{"scheduling", "update"}, Unchecked: "every probed pool declares every feature probed at scheduling and update, and the identity may not create nodes (config/rbac/synthetic-node.yaml grants it)"}
	g := Evaluate(r, policy)
	if g.Outcome != INCOMPLETE || len(g.Unchecked) != 2 || !strings.Contains(g.Unchecked[0].Reason, "config/rbac/synthetic-node.yaml") || !strings.Contains(g.Unchecked[1].Reason, "config/rbac/synthetic-node.yaml") {
		t.Errorf("without the grant: %s %v", g.Outcome, g.Unchecked)
	}
	r = rolledOut()
	const node = "ndfq-synthetic-abcde"
	r.Synthetic = probes.Synthetic{Node: node, Needed: []string{"scheduling", "update"}, Evicted: []string{"kube-system/kube-proxy-zz9"}}
	r.Placements = append(r.Placements,
		probes.PoolProbe{Pool: probes.SyntheticPool, Declares: true, Bound: true, Node: node},
		probes.PoolProbe{Pool: probes.SyntheticPool, Feature: "X", Message: pluginRefusal})
	r.Updates = append(r.Updates,
		probes.PoolUpdate{Pool: probes.SyntheticPool, Pod: "u-s", Node: node, Declares: true, Code: 200},
		probes.PoolUpdate{Pool: probes.SyntheticPool, Pod: "u-s1", Node: node, Feature: "Y", Code: 403, Message: fixtures.UpdateRejection("u-s1", "Y", node)})
	g = Evaluate(r, policy)
	var text bytes.Buffer
	_ = g.WriteText(&text)
	if g.Outcome != GO || !strings.Contains(text.String(), "synthetic node: "+node+" (declares nothing; added for scheduling and update, which no probed pool lacked): 1 refusals in the NodeDeclaredFeatures plugin's words, 1 rejections") ||
		!strings.Contains(g.SyntheticNode, "kube-system/kube-proxy-zz9") {
		t.Errorf("with the node: %s %v %v\n%s", g.Outcome, g.Reasons, g.Unchecked, text.String())
	}
	// The synthetic node's refusal must still be the plugin's.
	r.Placements[len(r.Placements)-1].Message = "0/3 nodes are available: 3 Insufficient cpu."
	if g := Evaluate(r, policy); !g.Holds(ForeignRefusal, probes.SyntheticPool, "") {
		t.Errorf("a foreign refusal on the synthetic node: %s %v", g.Outcome, g.Reasons)
	}
}

// Latency counts only decisions the probe's watch timed: a pool with one
// timed by whole-second stamps alone is unchecked, never a ratio of 0s.
func TestLatencyOfWholeSecondStampsIsUnchecked(t *testing.T) {
	r := soundRun()
	for i := range r.Placements {
		r.Placements[i].DecisionFrom = "watch"
	}
	r.Placements[0].Decision, r.Placements[0].DecisionFrom = 0, probes.DecisionFromCondition
	g := Evaluate(r, policy)
	if g.Outcome != INCOMPLETE || len(g.Unchecked) != 1 || g.Unchecked[0].Check != ItemDecisionLatency || g.Unchecked[0].Pool != "a" || g.Pools[0].ControlP50 != nil {
		t.Errorf("verdict %s %v, pool a %+v", g.Outcome, g.Unchecked, g.Pools[0])
	}
}

// Routes as the oracle says are GO; a route not read is unchecked, named.
func TestStreamingRoutes(t *testing.T) {
	r := soundRun()
	r.APIServer = probes.Gates{"NodeDeclaredFeatures": {Enabled: true}, "ExtendWebSocketsToKubelet": {Enabled: true, Stage: "BETA"}}
	r.Routes = []probes.PoolRoute{{Pool: "a", Node: "a1", Declares: true, Route: "proxied_to_kubelet"}, {Pool: "b", Node: "b1", Route: "translated_at_apiserver"}}
	if g := Evaluate(r, policy); g.Outcome != GO {
		t.Errorf("as the oracle says: %s %v %v", g.Outcome, g.Reasons, g.Unchecked)
	}
	r.APIServer["ExtendWebSocketsToKubelet"] = probes.GateState{Enabled: false, Stage: "BETA"}
	if g := Evaluate(r, policy); !g.Holds(StreamingRoute, "a", "a1") {
		t.Errorf("proxied although the apiserver has the gate off: %s %v", g.Outcome, g.Reasons)
	}
	r.Routes[1] = probes.PoolRoute{Pool: "b", Node: "b1", Unchecked: "the identity may not create pods/exec in ndfq-probe-x (config/rbac/kubelet.yaml grants it)"}
	r.Routes = r.Routes[1:]
	if g := Evaluate(r, policy); g.Outcome != INCOMPLETE || len(g.Unchecked) != 1 || g.Unchecked[0].Check != ItemStreamingRoute || g.Unchecked[0].Pool != "b" {
		t.Errorf("not read: %s %v", g.Outcome, g.Unchecked)
	}
}
