package verdict

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/probes"
)

// Each case here is a run the probe used to call GO (or HOLD for the wrong
// reason) where it had not looked: issue 27's "Why", bullet by bullet.

// A refusal counts only in the plugin's words, a rejection only as the
// validator's 403 in its words; anything else holds, naming what answered.
func TestOnlyTheComponentsOwnWordsCount(t *testing.T) {
	r := soundRun()
	r.Placements[3].Message = "0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}."
	g := Evaluate(r, policy)
	if g.Outcome != HOLD || !g.Holds(ForeignRefusal, "b", "") || g.Pools[1].Refusals != 0 {
		t.Errorf("a refusal by a taint: %s %v %+v", g.Outcome, g.Reasons, g.Pools[1])
	}
	// The validator off, a ValidatingAdmissionPolicy answering 403 in its own words.
	r = soundRun()
	r.Updates[1].Message = `pods "u-b" is forbidden: ValidatingAdmissionPolicy 'no-resize' with binding 'no-resize' denied request: resizes are frozen`
	g = Evaluate(r, policy)
	want := "foreign-rejection [b/b1]: an update needing Y was answered 403, not by NodeDeclaredFeatureValidator in its words: pods \"u-b\" is forbidden: ValidatingAdmissionPolicy"
	if g.Outcome != HOLD || !strings.Contains(fmt.Sprint(g.Reasons), want) || g.Pools[1].Rejections != 0 {
		t.Errorf("a policy's 403: %s %v", g.Outcome, g.Reasons)
	}
	// A quota's 422 is not the validator either.
	r.Updates[1].Code, r.Updates[1].Message = 422, "exceeded quota"
	if g := Evaluate(r, policy); !g.Holds(ForeignRejection, "b", "b1") {
		t.Errorf("a 422: %v", g.Reasons)
	}
}

// A fleet where no pool lacks a feature never saw the plugin or the
// validator at work: INCOMPLETE naming both, never GO.
func TestPluginAndValidatorMustBeExercised(t *testing.T) {
	r := soundRun()
	r.Placements[3] = probes.PoolProbe{Pool: "b", Feature: "X", Declares: true, Bound: true, Node: "b1", Decision: time.Second}
	r.Updates[1] = probes.PoolUpdate{Pool: "b", Pod: "u-b", Node: "b1", Feature: "Y", Declares: true, Code: 200}
	g := Evaluate(r, policy)
	var items []string
	for _, u := range g.Unchecked {
		items = append(items, u.Check)
	}
	if g.Outcome != INCOMPLETE || !slices.Equal(items, []string{ItemPluginNotExercised, ItemValidatorNotExercised}) {
		t.Errorf("nothing refused or rejected: %s %v", g.Outcome, g.Unchecked)
	}
}

// Scope: a narrowed run says what it probed and names every node it did
// not; --accept-partial is the way to gate on a slice, and says so.
func TestScopeIsInTheVerdict(t *testing.T) {
	r := soundRun()
	r.NodeSelector = "ndfq.io/pool in (a,b)"
	r.OutOfScope = []string{"c1", "c2", "d1", "d2"}
	g := Evaluate(r, policy)
	var text bytes.Buffer
	_ = g.WriteText(&text)
	if g.Outcome != INCOMPLETE || g.Scope.Nodes != 2 || g.Scope.ClusterNodes != 6 ||
		!strings.Contains(text.String(), `scope: 2 of 6 nodes in 2 pools (--node-selector "ndfq.io/pool in (a,b)")`) ||
		!strings.Contains(text.String(), "NOT CHECKED: out-of-scope: 4 of 6 nodes are outside --node-selector") ||
		!slices.Equal(g.Unchecked[0].Nodes, r.OutOfScope) {
		t.Errorf("narrowed: %s %v\n%s", g.Outcome, g.Unchecked, text.String())
	}
	g = Evaluate(r, Policy{Thresholds: DefaultThresholds, AcceptPartial: true})
	text.Reset()
	_ = g.WriteText(&text)
	if g.Outcome != GO || len(g.Accepted) != 1 || !strings.Contains(text.String(), "--accept-partial: the verdict is on this scope alone") ||
		!strings.Contains(text.String(), "ACCEPTED (--accept-partial): out-of-scope") {
		t.Errorf("--accept-partial: %s %v\n%s", g.Outcome, g.Accepted, text.String())
	}
	var junit bytes.Buffer
	_ = g.WriteJUnit(&junit)
	if !strings.Contains(junit.String(), `name="out-of-scope [cluster]" classname="ndfq.probe.cluster" status="skipped"`) ||
		!strings.Contains(junit.String(), "accepted (--accept-partial): out-of-scope") {
		t.Errorf("JUnit of an accepted slice:\n%s", junit.String())
	}
	// --kubelet-sample: the unsampled kubelet is named, per pool.
	r = soundRun()
	r.KubeletSample = 1
	r.Declarations = append(r.Declarations, probes.Declaration{Node: "a2", Pool: "a", KubeletVersion: "v1.37.2", Published: true, Declared: []string{"X"}, Digest: "0123456789ab", NotSampled: true, HeartbeatAge: time.Second})
	g = Evaluate(r, policy)
	if g.Outcome != INCOMPLETE || len(g.Unchecked) != 1 || g.Unchecked[0].Check != ItemNotSampled || g.Unchecked[0].Pool != "a" || !slices.Equal(g.Unchecked[0].Nodes, []string{"a2"}) || g.Scope.KubeletsRead != 2 {
		t.Errorf("sampled: %s %v %+v", g.Outcome, g.Unchecked, g.Scope)
	}
}

// A node without a Lease is not fresh by default: unknown, or stale by
// its own Ready heartbeat.
func TestNoLeaseIsNotFresh(t *testing.T) {
	r := soundRun()
	r.Declarations[0].NoLease, r.Declarations[0].HeartbeatAge = true, 0
	g := Evaluate(r, policy)
	if g.Outcome != INCOMPLETE || len(g.Unchecked) != 1 || g.Unchecked[0].Check != ItemFreshness || !slices.Equal(g.Unchecked[0].Nodes, []string{"a1"}) {
		t.Errorf("no lease, no heartbeat: %s %v", g.Outcome, g.Unchecked)
	}
	r.Declarations[0].HeartbeatAge = 10 * time.Minute
	if g := Evaluate(r, policy); !g.Holds(StaleDeclarations, "a", "a1") || !strings.Contains(g.Reasons[0].Detail, "no Lease, and the Ready condition's heartbeat is 10m0s old") {
		t.Errorf("no lease, old heartbeat: %v", g.Reasons)
	}
}

// Nothing is dropped silently: a feature ndfq has no probe for is
// unchecked; one whose field the apiserver has off is not applicable, by
// name; an unknown control-plane minor is unchecked.
func TestNothingDroppedSilently(t *testing.T) {
	r := soundRun()
	r.NotProbed = []probes.NotProbed{{Feature: "SecurityProfileOCI", At: "scheduling", Why: "ndfq has no scheduling probe for it (a seccompProfile of type OCI)"}}
	g := Evaluate(r, policy)
	if g.Outcome != INCOMPLETE || len(g.Unchecked) != 1 || g.Unchecked[0].String() != "feature-not-probed [control-plane]: SecurityProfileOCI at scheduling: ndfq has no scheduling probe for it (a seccompProfile of type OCI)" {
		t.Errorf("feature without a probe: %s %v", g.Outcome, g.Unchecked)
	}
	r.NotProbed = []probes.NotProbed{{Feature: "VolumeBindMountOptions", At: "scheduling", GateOff: "VolumeBindMountOptions", Why: "kube-apiserver has VolumeBindMountOptions off (ALPHA)"}}
	g = Evaluate(r, policy)
	if g.Outcome != GO || len(g.NotApplicable) != 1 || g.NotApplicable[0].Reason != "VolumeBindMountOptions at scheduling: kube-apiserver has VolumeBindMountOptions off (ALPHA), so no pod can ask for it here" {
		t.Errorf("field gate off: %s %v %v", g.Outcome, g.Unchecked, g.NotApplicable)
	}
	r = soundRun()
	r.ServerVersion = "v1.39.0"
	if g := Evaluate(r, policy); g.Outcome != INCOMPLETE || g.Unchecked[0].Check != ItemOracle {
		t.Errorf("unknown minor: %s %v", g.Outcome, g.Unchecked)
	}
}

// --intent holds the control plane too: every apiserver's version and
// gates, the scheduler's gates, the extra schedulers the plan names.
func TestIntentCoversTheControlPlane(t *testing.T) {
	plan := func() *Intent {
		in := soundIntent()
		in.ControlPlane = &IntentControlPlane{Version: "1.37.2", APIServer: fixtures.Component{Version: "1.37.2"}, Scheduler: fixtures.Component{Version: "1.37.2"}}
		return in
	}
	run := func() *probes.Run {
		r := intentRun()
		r.APIServer, r.Scheduler = probes.Gates{}, probes.Gates{}
		for g, on := range fixtures.EffectiveGates("1.37", nil) {
			r.APIServer[g], r.Scheduler[g] = probes.GateState{Enabled: on}, probes.GateState{Enabled: on}
		}
		return r
	}
	if g := Evaluate(run(), Policy{Thresholds: DefaultThresholds, Intent: plan()}); g.Outcome != GO {
		t.Fatalf("as planned: %s %v %v", g.Outcome, g.Reasons, g.Unchecked)
	}
	cases := map[string]func(*probes.Run, *Intent){
		"kube-apiserver at https://10.0.0.2:6443 is v1.36.3, the intent plans v1.37.2": func(r *probes.Run, _ *Intent) {
			r.APIServers = map[string]probes.Gates{"https://10.0.0.1:6443": r.APIServer, "https://10.0.0.2:6443": r.APIServer}
			r.APIServerVersions = map[string]string{"https://10.0.0.1:6443": "v1.37.2", "https://10.0.0.2:6443": "v1.36.3"}
		},
		"kube-apiserver at the cluster's address: gate ExtendWebSocketsToKubelet: the intent plans true, it reports off": func(r *probes.Run, _ *Intent) {
			r.APIServer["ExtendWebSocketsToKubelet"] = probes.GateState{Enabled: false}
		},
		"kube-scheduler: gate InPlacePodLevelResourcesVerticalScaling: the intent plans true, it reports off": func(r *probes.Run, _ *Intent) {
			r.Scheduler["InPlacePodLevelResourcesVerticalScaling"] = probes.GateState{Enabled: false}
		},
	}
	for want, breakIt := range cases {
		r, in := run(), plan()
		breakIt(r, in)
		if g := Evaluate(r, Policy{Thresholds: DefaultThresholds, Intent: in}); !g.Holds(IntentMismatch, ControlPlane, "") || !strings.Contains(fmt.Sprint(g.Reasons), want) {
			t.Errorf("want %q: %s %v", want, g.Outcome, g.Reasons)
		}
	}
	in := plan()
	in.ControlPlane.ExtraSchedulers = []IntentScheduler{{Name: "batch"}, {Name: "legacy", IgnoresDeclarations: true}}
	g := Evaluate(run(), Policy{Thresholds: DefaultThresholds, Intent: in})
	if g.Outcome != INCOMPLETE || len(g.Unchecked) != 1 || !strings.Contains(g.Unchecked[0].Reason, `scheduler "batch" with the NodeDeclaredFeatures plugin, which this run did not probe`) ||
		len(g.NotApplicable) != 1 || !strings.Contains(g.NotApplicable[0].Reason, `scheduler "legacy" without the NodeDeclaredFeatures plugin`) {
		t.Errorf("extra schedulers not probed: %s %v %v", g.Outcome, g.Unchecked, g.NotApplicable)
	}
	// Both probed, as --intent makes the CLI do: the one planned without the
	// plugin binding where the pool lacks the feature is as planned, not
	// scheduler-ignores-declarations; the one with it refuses in its words.
	r := run()
	r.Schedulers = []string{"batch", "legacy"}
	r.Placements = append(r.Placements,
		probes.PoolProbe{Pool: "b", Scheduler: "legacy", Feature: "X", Bound: true, Node: "b1"},
		probes.PoolProbe{Pool: "b", Scheduler: "batch", Feature: "X", Message: pluginRefusal})
	if g := Evaluate(r, Policy{Thresholds: DefaultThresholds, Intent: in}); g.Outcome != GO {
		t.Errorf("both extra schedulers probed, as planned: %s %v %v", g.Outcome, g.Reasons, g.Unchecked)
	}
	// Probed: one planned with the plugin that binds where the pool lacks the feature drifted.
	r = run()
	r.Schedulers = []string{"batch"}
	r.Placements = append(r.Placements, probes.PoolProbe{Pool: "b", Scheduler: "batch", Feature: "X", Bound: true, Node: "b1"})
	in.ControlPlane.ExtraSchedulers = in.ControlPlane.ExtraSchedulers[:1]
	if g := Evaluate(r, Policy{Thresholds: DefaultThresholds, Intent: in}); !strings.Contains(fmt.Sprint(g.Reasons), "intent-mismatch [control-plane]: scheduler batch bound a pod needing X to b1") {
		t.Errorf("a planned plugin scheduler that ignores declarations: %v", g.Reasons)
	}
}

// HA: apiservers that answer the same update differently hold, naming
// both endpoints, whichever one the cluster's address reached.
func TestAPIServersThatAnswerDifferentlyHold(t *testing.T) {
	r := soundRun()
	r.Updates[1].ByAPIServer = map[string]probes.Answer{
		"https://10.0.0.1:6443": {Code: 403, Message: fixtures.UpdateRejection("u-b", "Y", "b1")},
		"https://10.0.0.2:6443": {Code: 200},
	}
	g := Evaluate(r, policy)
	want := "apiserver-split [b/b1]: an update needing Y: admitted by https://10.0.0.2:6443, refused by https://10.0.0.1:6443 (403"
	if g.Outcome != HOLD || !strings.Contains(fmt.Sprint(g.Reasons), want) {
		t.Errorf("%s %v", g.Outcome, g.Reasons)
	}
}

// Latency holds when control pods are decided in under a second: a ratio
// against zero used to be skipped.
func TestLatencyWithSubSecondControls(t *testing.T) {
	r := soundRun()
	for i := range r.Placements {
		if r.Placements[i].Feature == "" {
			r.Placements[i].Decision = 40 * time.Millisecond
		}
	}
	r.Placements[1].Decision = 15 * time.Second
	if g := Evaluate(r, policy); !g.Holds(SchedulerLatency, "a", "") {
		t.Errorf("15s against 40ms: %v", g.Reasons)
	}
	r.Placements[0].Decision = 0
	if g := Evaluate(r, policy); !g.Holds(SchedulerLatency, "a", "") {
		t.Errorf("15s against a control decided within the millisecond: %v", g.Reasons)
	}
	r.Placements[1].Decision = 300 * time.Millisecond
	if g := Evaluate(r, policy); g.Holds(SchedulerLatency, "", "") {
		t.Errorf("below --min-latency nothing holds: %v", g.Reasons)
	}
}

// The table: every condition is raised by a check (check-not-made by
// --hold-unchecked), a check raises only known conditions, every item is
// left by a check and leaves only known conditions, and the schema's
// enums are the table's.
func TestTheChecksAreOneTable(t *testing.T) {
	raised := map[Condition]bool{CheckNotMade: true}
	left := map[string]bool{}
	for _, c := range checks {
		for _, cond := range c.raises {
			if !slices.Contains(Conditions, cond) {
				t.Errorf("check %s raises %s, not in Conditions", c.name, cond)
			}
			raised[cond] = true
		}
		for _, it := range c.leaves {
			left[it] = true
		}
	}
	for _, cond := range Conditions {
		if !raised[cond] {
			t.Errorf("no check raises %s", cond)
		}
		if a := ConditionAbout[cond]; a.Means == "" || a.Do == "" {
			t.Errorf("%s: no meaning or action", cond)
		}
	}
	var names []string
	for _, it := range Items {
		names = append(names, it.Name)
		if !left[it.Name] {
			t.Errorf("no check leaves %s", it.Name)
		}
		for _, c := range it.Leaves {
			if !slices.Contains(Conditions, c) {
				t.Errorf("item %s leaves %s, not in Conditions", it.Name, c)
			}
		}
	}
	var schema struct {
		Defs struct {
			Items struct {
				Items struct {
					Properties struct {
						Check struct {
							Enum []string `json:"enum"`
						} `json:"check"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"items"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(ProbeSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if got := schema.Defs.Items.Items.Properties.Check.Enum; !slices.Equal(got, names) {
		t.Errorf("probe.schema.json items %v, the table %v", got, names)
	}
}

// docs/rollout.md's table of conditions and items is the table's own
// (NDFQ_UPDATE_DOCS=1 rewrites it).
func TestRunbookTableIsTheTable(t *testing.T) {
	const path, begin, end = "../docs/rollout.md", "<!-- verdict-table:begin -->\n", "<!-- verdict-table:end -->"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	WriteMarkdownTable(&table)
	s := string(doc)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q block", path, begin, end)
	}
	if got := s[i+len(begin) : j]; got != table.String() {
		if os.Getenv("NDFQ_UPDATE_DOCS") == "1" {
			if err := os.WriteFile(path, []byte(s[:i+len(begin)]+table.String()+s[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s's table differs from verdict's (NDFQ_UPDATE_DOCS=1 go test ./verdict rewrites it)", path)
	}
}
