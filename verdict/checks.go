package verdict

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/probes"
)

// Condition is a stop condition's name, as reports and the JSON print it.
type Condition string

// The stop conditions; Conditions has what each means.
const (
	RolloutOrder              Condition = "rollout-order"
	KubeletUnreachable        Condition = "kubelet-unreachable"
	MissingReport             Condition = "missing-report"
	DeclaredButNotEnabled     Condition = "declared-but-not-enabled"
	StaleDeclarations         Condition = "stale-declarations"
	MissingReportRate         Condition = "missing-report-rate"
	MixedPool                 Condition = "mixed-pool"
	UnexpectedRefusal         Condition = "unexpected-refusal"
	UnexpectedAdmission       Condition = "unexpected-admission"
	ForeignRefusal            Condition = "foreign-refusal"
	SchedulerLatency          Condition = "scheduler-latency"
	UnexpectedUpdateRejection Condition = "unexpected-update-rejection"
	UnexpectedUpdateAdmission Condition = "unexpected-update-admission"
	ForeignRejection          Condition = "foreign-rejection"
	APIServerSplit            Condition = "apiserver-split"
	GateFingerprint           Condition = "gate-fingerprint"
	IntentMismatch            Condition = "intent-mismatch"
	SchedulerIgnoresDecl      Condition = "scheduler-ignores-declarations"
	ForeignNodeWrite          Condition = "foreign-node-write"
	StreamingRoute            Condition = "streaming-route"
	SignalSilent              Condition = "signal-silent"
	CheckNotMade              Condition = "check-not-made"
)

// About is what a condition or an unchecked item means and what an
// operator does about it (docs/rollout.md's table is made from these).
type About struct {
	Means, Do string
}

// Conditions are every stop condition, in the order reports list them.
var Conditions = []Condition{RolloutOrder, KubeletUnreachable, MissingReport, DeclaredButNotEnabled, StaleDeclarations, MissingReportRate, MixedPool,
	UnexpectedRefusal, UnexpectedAdmission, ForeignRefusal, SchedulerLatency, UnexpectedUpdateRejection, UnexpectedUpdateAdmission, ForeignRejection,
	APIServerSplit, GateFingerprint, IntentMismatch, SchedulerIgnoresDecl, ForeignNodeWrite, StreamingRoute, SignalSilent, AboveBaseline, CheckNotMade}

// ConditionAbout says what each condition means and what to do.
var ConditionAbout = map[Condition]About{
	RolloutOrder:              {"the scheduler or a kubelet has NodeDeclaredFeatures on while kube-apiserver has it off", "turn the apiserver on first, then the scheduler, then kubelets pool by pool"},
	KubeletUnreachable:        {"a kubelet's gates could not be read, so its declarations cannot be checked", "bring the kubelet back (or drain and remove the node), then probe again"},
	MissingReport:             {"a node declares less than its kubelet's version, gates and runtime must", "restart that kubelet (features are computed at start); if it persists, file the node's gates and runtime"},
	DeclaredButNotEnabled:     {"a node declares what its kubelet does not enable: stale from an earlier run, or forged", "clear status.declaredFeatures (a kubelet that publishes nothing never clears it) or find who writes nodes/status"},
	StaleDeclarations:         {"a node's Lease (or, without one, its Ready heartbeat) is older than --freshness", "its declarations may be from a kubelet that is gone: bring it back or drain it"},
	MissingReportRate:         {"more of a pool's nodes miss declarations than --max-missing-rate allows", "stop the pool's rollout; see each node's missing-report"},
	MixedPool:                 {"a pool's nodes declare different sets", "finish or undo the pool's rollout so one kubelet configuration runs there"},
	UnexpectedRefusal:         {"the scheduler refused a pod on a pool that declares all it needs (or a control pod)", "read the refusal: a taint, capacity or a plugin other than NodeDeclaredFeatures"},
	UnexpectedAdmission:       {"the default scheduler bound a pod to a node that does not declare what it needs", "turn the scheduler's NodeDeclaredFeatures gate on (after the apiserver's)"},
	ForeignRefusal:            {"a pod that needs a feature the pool lacks was refused, but not in the NodeDeclaredFeatures plugin's words", "the refusal is something else's (affinity, taints, another plugin): the plugin was not seen; fix what refused it and probe again"},
	SchedulerLatency:          {"probe pods are decided much slower than control pods (over --max-latency-ratio and --min-latency)", "look at the scheduler's queue and the plugin's Filter time before widening the rollout"},
	UnexpectedUpdateRejection: {"an update was rejected on a pool that declares what it needs (or a control update)", "read the rejection: a webhook, a policy or a quota answered"},
	UnexpectedUpdateAdmission: {"an update that needs a feature was admitted for a node that does not declare it", "turn NodeDeclaredFeatureValidator back on (--enable-admission-plugins), with the apiserver's gate"},
	ForeignRejection:          {"an update that needs a feature the node lacks was rejected, but not by NodeDeclaredFeatureValidator in its words", "a policy engine, webhook or quota answered: the validator was not seen; check --disable-admission-plugins"},
	APIServerSplit:            {"the apiservers behind the cluster's address answered the same update differently", "finish the control plane's rolling change so every apiserver runs the same gates and admission plugins"},
	GateFingerprint:           {"the control-plane components disagree with each other, or with what kubelets declare, on the gate", "align kube-apiserver and kube-scheduler (every apiserver of an HA control plane)"},
	IntentMismatch:            {"a node, apiserver or scheduler differs from the plan given with --intent", "the fleet drifted from the plan: fix the component named, or the plan"},
	SchedulerIgnoresDecl:      {"a second scheduler (--scheduler-name) bound a pod to a node that does not declare what it needs", "enable the NodeDeclaredFeatures plugin in that scheduler's profile"},
	ForeignNodeWrite:          {"one node's kubelet identity may write another node's status.declaredFeatures: any kubelet can declare for any node", "list NodeRestriction in kube-apiserver's --enable-admission-plugins (with --authorization-mode Node)"},
	StreamingRoute:            {"the apiservers routed a WebSocket exec to a pool's node otherwise than its declaration says: proxied to a kubelet that does not declare ExtendWebSocketsToKubelet (its streams break) or translated where the node declares it", "compare the node's declaredFeatures with kube-apiserver's ExtendWebSocketsToKubelet gate on every apiserver"},
	SignalSilent:              {"a component refused or rejected the probe's pods in its own words, but its upstream series (scheduler_unschedulable_pods, the validator's admission counter) did not rise by as many: an operator's dashboard and alerts are blind to it", "check the component's metrics (a relabelling, a wrong plugin or admission name, a proxy answering for it) before trusting the rules of config/prometheus/"},
	AboveBaseline:             {"a pool's missing-report rate, refusals, rejections or probe decision time is above the earlier report given with --baseline", "compare the two reports' pools: a pool that lost features, a kubelet rollout half done, or a slower scheduler; probe again after fixing it, or take a new baseline if the change is meant"},
	CheckNotMade:              {"a check that applies could not be made (--hold-unchecked)", "see the unchecked item it names"},
}

// The unchecked items' names: checks that apply and could not be made.
const (
	ItemOutOfScope            = "out-of-scope"
	ItemNotSampled            = "not-sampled"
	ItemOracle                = "oracle"
	ItemOracleRelease         = "oracle-release"
	ItemFeatureNotProbed      = "feature-not-probed"
	ItemSchedulerGates        = "scheduler-gates"
	ItemAPIServerGates        = "apiserver-gates"
	ItemKubeletGates          = "kubelet-gates"
	ItemRuntimeFeatures       = "runtime-features"
	ItemFreshness             = "freshness"
	ItemPlacementAndUpdates   = "placement-and-updates"
	ItemPluginNotExercised    = "plugin-not-exercised"
	ItemValidatorNotExercised = "validator-not-exercised"
	ItemIntent                = "intent"
	ItemNodeWrites            = "node-writes"
	ItemDecisionLatency       = "decision-latency"
	ItemStreamingRoute        = "streaming-route"
	ItemSignals               = "signals"
	ItemBaseline              = "baseline"
)

// ItemInfo is one unchecked item: what it leaves unasked (those JUnit cases
// are skipped, not passed) and what it means. An item that leaves no
// condition has a JUnit case of its own.
type ItemInfo struct {
	Name   string
	Leaves []Condition
	About
}

var (
	kubeletConditions  = []Condition{KubeletUnreachable, MissingReport, DeclaredButNotEnabled, MissingReportRate, RolloutOrder}
	placementAndUpdate = []Condition{UnexpectedRefusal, UnexpectedAdmission, ForeignRefusal, SchedulerLatency, SchedulerIgnoresDecl,
		UnexpectedUpdateRejection, UnexpectedUpdateAdmission, ForeignRejection, APIServerSplit}
)

// Items are every unchecked item.
var Items = []ItemInfo{
	{ItemOutOfScope, nil, About{"nodes outside --node-selector: nothing of theirs was read or probed", "probe them too, or pass --accept-partial to gate on this slice alone (the verdict says so)"}},
	{ItemNotSampled, []Condition{MissingReport, DeclaredButNotEnabled, MissingReportRate, RolloutOrder}, About{"kubelets left out by --kubelet-sample: their declarations were judged only against their pool's", "raise --kubelet-sample, or pass --accept-partial"}},
	{ItemOracle, placementAndUpdate, About{"the control plane's minor is one ndfq's oracle does not know: no placement or update probe applies", "use an ndfq that knows this minor"}},
	{ItemOracleRelease, append(slices.Clone(kubeletConditions), placementAndUpdate...), About{"a component runs a release ndfq's tables were not held to: not the release its minor's tables were written from, and not checked here against its own sources (or checked and found to differ); what it declares, refuses and answers was judged by another release's tables", "run `ndfq oracle check RELEASE` where the probe runs (it keeps the answer in ndfq's cache, which --oracle-cache reads), then probe again; a release that differs needs an ndfq whose tables know it"}},
	{ItemFeatureNotProbed, nil, About{"a feature the control plane infers that ndfq has no probe for (where the apiserver has the feature's field gate off it is listed as not applicable instead: no pod can ask for it)", "accept that this feature is unproven here, or add a probe to fixtures/pods.go"}},
	{ItemSchedulerGates, []Condition{RolloutOrder, GateFingerprint}, About{"kube-scheduler's gates were not read and no refusal in the plugin's words was seen", "pass --scheduler-metrics-url, or probe a fleet where a pool lacks a feature"}},
	{ItemAPIServerGates, []Condition{GateFingerprint, APIServerSplit}, About{"not every apiserver behind the cluster's address could be read (or asked) directly", "grant endpointslices list in default (config/rbac/) and reach each apiserver's address"}},
	{ItemKubeletGates, kubeletConditions, About{"no kubelet's gates were read (no nodes/proxy permission)", "bind config/rbac/kubelet.yaml"}},
	{ItemRuntimeFeatures, []Condition{MissingReport, DeclaredButNotEnabled}, About{"nodes whose runtime's CRI report nothing read (a runtime ndfq's table does not know, no --cri-image): features that depend on it are undecided", "pass --cri-image (ndfq's own image) so a pod on each node reads the runtime's report, or add the runtime to fixtures/runtimes.go"}},
	{ItemFreshness, []Condition{StaleDeclarations}, About{"nodes without a Lease: how fresh their declarations are is unknown", "find why the kubelet keeps no Lease in kube-node-lease"}},
	{ItemPlacementAndUpdates, placementAndUpdate, About{"every node of a pool is stale, so no probe pod was placed or updated there", "bring the pool's kubelets back, then probe again"}},
	{ItemPluginNotExercised, []Condition{UnexpectedAdmission, ForeignRefusal}, About{"every probed pool declares every feature probed at scheduling and no synthetic node was added: no pod could be refused, so the plugin was not seen refusing", "bind config/rbac/synthetic-node.yaml (the probe adds, for the run, a tainted node that declares nothing), or include a pool that lacks a feature"}},
	{ItemValidatorNotExercised, []Condition{UnexpectedUpdateAdmission, ForeignRejection}, About{"every probed pool declares every feature probed at update and no synthetic node was added: no update could be rejected, so the validator was not seen rejecting", "bind config/rbac/synthetic-node.yaml (the probe adds, for the run, a tainted node that declares nothing), or include a pool that lacks a feature"}},
	{ItemNodeWrites, []Condition{ForeignNodeWrite}, About{"no kubelet identity was asked to write another node's declarations (impersonation not granted, or the answer was not NodeRestriction's)", "bind config/rbac/node-writes.yaml, or read the refusal it names"}},
	{ItemStreamingRoute, []Condition{StreamingRoute}, About{"how the apiservers routed a WebSocket exec to a pool's node was not read (no pods/exec, an apiserver's counter unread, or another client streamed meanwhile)", "bind config/rbac/kubelet.yaml, reach every apiserver, and probe again"}},
	{ItemDecisionLatency, []Condition{SchedulerLatency}, About{"a pool's scheduling decisions were not all timed by the probe's watch: whole-second stamps cannot time them", "probe again; if it persists, the watch of the probe's pods is cut (a proxy's idle timeout?)"}},
	{ItemSignals, []Condition{SignalSilent}, About{"a component that answered the probe had its upstream series unread (its /metrics not reachable or not answering)", "pass --scheduler-metrics-url (the leading scheduler's secure port) and reach every apiserver's /metrics"}},
	{ItemBaseline, []Condition{AboveBaseline}, About{"a pool on one side only of the comparison with --baseline: its figures were not compared", "take a new baseline once the fleet's pools are what they should be"}},
	{ItemIntent, []Condition{IntentMismatch}, About{"a part of the plan (--intent) that could not be held to the cluster: the scheduler's gates unread, an extra scheduler not probed", "pass --scheduler-metrics-url, or --scheduler-name for each scheduler the plan names"}},
}

// check is one row of the verdict: the conditions it may raise and the
// unchecked items it may leave, and the function that looks.
type check struct {
	name   string
	raises []Condition
	leaves []string
	run    func(*evaluation)
}

// checks are every check, in the order they run.
var checks = []check{
	{"scope", nil, []string{ItemOutOfScope, ItemNotSampled}, checkScope},
	{"oracle", nil, []string{ItemOracle, ItemOracleRelease, ItemFeatureNotProbed}, checkOracle},
	{"control-plane", []Condition{RolloutOrder, GateFingerprint}, []string{ItemSchedulerGates, ItemAPIServerGates}, checkControlPlane},
	{"kubelets", []Condition{RolloutOrder, KubeletUnreachable, MissingReport, DeclaredButNotEnabled, MissingReportRate, MixedPool}, []string{ItemKubeletGates, ItemRuntimeFeatures}, checkKubelets},
	{"freshness", []Condition{StaleDeclarations}, []string{ItemFreshness}, checkFreshness},
	{"placement", []Condition{UnexpectedRefusal, UnexpectedAdmission, ForeignRefusal, SchedulerIgnoresDecl}, []string{ItemPlacementAndUpdates, ItemPluginNotExercised}, checkPlacement},
	{"latency", []Condition{SchedulerLatency}, []string{ItemDecisionLatency}, checkLatency},
	{"updates", []Condition{UnexpectedUpdateRejection, UnexpectedUpdateAdmission, ForeignRejection, APIServerSplit}, []string{ItemValidatorNotExercised}, checkUpdates},
	{"node-writes", []Condition{ForeignNodeWrite}, []string{ItemNodeWrites}, checkNodeWrites},
	{"synthetic-node", nil, nil, checkSynthetic},
	{"streaming-route", []Condition{StreamingRoute}, []string{ItemStreamingRoute}, checkRoutes},
	{"intent", []Condition{IntentMismatch}, []string{ItemIntent}, checkIntent},
	{"signals", []Condition{SignalSilent}, []string{ItemSignals}, checkSignals},
	// Last: it compares the figures the checks above counted.
	{"baseline", []Condition{AboveBaseline}, []string{ItemBaseline}, checkBaseline},
}

// checkScope names every node the run did not read: outside the selector,
// or its kubelet outside the sample.
func checkScope(e *evaluation) {
	if out := e.run.OutOfScope; len(out) > 0 {
		e.partial(ItemOutOfScope, "", out, "%d of %d nodes are outside --node-selector %q (%s): nothing of theirs was read or probed",
			len(out), e.v.Scope.ClusterNodes, e.run.NodeSelector, probes.NameNodesUpTo(out, 20))
	}
	for _, pool := range e.pools() {
		var left []string
		for _, d := range e.byPool[pool] {
			if d.NotSampled {
				left = append(left, d.Node)
			}
		}
		if len(left) > 0 {
			e.partial(ItemNotSampled, pool, left, "--kubelet-sample %d left the kubelets of %s unasked: their declarations were judged only against their pool's (mixed-pool)",
				e.run.KubeletSample, probes.NameNodesUpTo(left, 20))
		}
	}
}

// checkOracle names what the run could not probe for want of an oracle or
// a probe; a feature whose field the apiserver has off cannot be asked for
// by any pod here, so its claims do not apply (said, with the gate).
func checkOracle(e *evaluation) {
	if err := fixtures.KnownMinor(e.minor); err != nil {
		e.unchecked(ItemOracle, ControlPlane, nil, "control plane %s: %v: no placement or update probe is known for it", e.run.ServerVersion, err)
		return
	}
	e.checkReleases()
	if why := e.run.SlicesUnchecked; why != "" {
		e.unchecked(ItemFeatureNotProbed, ControlPlane, nil, "%s at update: %s", fixtures.DRANodeAllocatableResources, why)
	}
	for _, n := range e.run.NotProbed {
		if n.GateOff != "" {
			e.v.NotApplicable = append(e.v.NotApplicable, Unchecked{Check: ItemFeatureNotProbed, Pool: ControlPlane,
				Reason: fmt.Sprintf("%s at %s: %s%s", n.Feature, n.At, n.Why, map[bool]string{false: ", so no pod can ask for it here"}[n.Path])})
			continue
		}
		e.unchecked(ItemFeatureNotProbed, ControlPlane, nil, "%s at %s: %s", n.Feature, n.At, n.Why)
	}
}

// SchedulerSeenRefusing is the scheduler's fingerprint where its metrics
// (its gates, and the signal scheduler_unschedulable_pods) were not read.
const SchedulerSeenRefusing = "plugin seen refusing (no metrics read: its gates and scheduler_unschedulable_pods unchecked; --scheduler-metrics-url reads them)"

// checkControlPlane holds the control plane's gates against each other and
// the kubelets: the rollout order and the fingerprint.
func checkControlPlane(e *evaluation) {
	run, ndf := e.run, fixtures.NodeDeclaredFeatures
	if run.Scheduler != nil && run.Scheduler.Enabled(ndf) && !e.apiOn {
		e.hold(RolloutOrder, ControlPlane, "", "kube-scheduler runs the NodeDeclaredFeatures plugin while kube-apiserver has the gate off: turn the apiserver on first, then the scheduler")
	}
	anyPublished := slices.ContainsFunc(run.Declarations, func(d probes.Declaration) bool { return d.Published })
	switch {
	case anyPublished && !e.apiOn:
		e.hold(GateFingerprint, "", "", "kubelets declare features but kube-apiserver has NodeDeclaredFeatures %s: updates are not validated", run.APIServer.Describe(ndf))
	case run.Scheduler != nil && run.Scheduler.Enabled(ndf) != e.apiOn:
		e.hold(GateFingerprint, "", "", "kube-scheduler has NodeDeclaredFeatures %s, kube-apiserver %s", run.Scheduler.Describe(ndf), run.APIServer.Describe(ndf))
	case run.Scheduler != nil && anyPublished && !run.Scheduler.Enabled(ndf):
		e.hold(GateFingerprint, "", "", "kubelets declare features but kube-scheduler has NodeDeclaredFeatures off: placement ignores them")
	}
	if run.Scheduler == nil {
		// Without its metrics, the plugin's own refusal message is evidence
		// that the default scheduler runs it (a plain cluster's scheduler
		// listens on loopback only).
		if seen, ok := e.pluginRefusal(); ok {
			e.v.Fingerprint["kube-scheduler"] = SchedulerSeenRefusing
			if !e.apiOn {
				e.hold(RolloutOrder, ControlPlane, "", "kube-scheduler refused a pod with the NodeDeclaredFeatures plugin's message (%q) while kube-apiserver has the gate off: turn the apiserver on first, then the scheduler", seen)
			}
		} else {
			why := "no --scheduler-metrics-url"
			if run.SchedulerUnchecked != "" {
				why = run.SchedulerUnchecked
			}
			e.unchecked(ItemSchedulerGates, ControlPlane, nil, "kube-scheduler's gates were not read (%s) and no probe pod was refused with the plugin's message: whether it runs the plugin, and the rollout order against the apiserver, are unchecked", why)
		}
	}
	for _, gate := range apiServerGates(e.minor) {
		if detail, ok := apiServersDisagree(run.APIServers, gate); ok {
			e.hold(GateFingerprint, ControlPlane, "", "%s", detail)
		}
	}
	if run.APIServersUnchecked != "" {
		e.unchecked(ItemAPIServerGates, ControlPlane, nil, "%s", run.APIServersUnchecked)
	}
}

// checkKubelets holds each node's declared set against what its kubelet
// must declare, and each pool's nodes against each other.
func checkKubelets(e *evaluation) {
	ndf := fixtures.NodeDeclaredFeatures
	for _, d := range e.run.Declarations {
		if d.Gates.Enabled(ndf) && !e.apiOn {
			stored := "none are stored"
			if d.Published {
				stored = fmt.Sprintf("the apiserver stored %v anyway", d.Declared)
			}
			e.hold(RolloutOrder, d.Pool, d.Node, "kubelet %s has NodeDeclaredFeatures on while kube-apiserver has it off (%s): the apiserver goes first", d.KubeletVersion, stored)
		}
	}
	for _, pool := range e.pools() {
		ps := e.summary[pool]
		missing := 0
		type undecided struct{ runtime, why string }
		unknown := map[undecided][]probes.Declaration{} // where features are undecided, and why: its nodes
		for _, d := range e.byPool[pool] {
			if d.Unreachable != "" {
				e.hold(KubeletUnreachable, pool, d.Node, "its gates cannot be read, so its declarations %v cannot be checked: %s", d.Declared, strings.Join(strings.Fields(d.Unreachable), " "))
			}
			if len(d.Missing) > 0 {
				missing++
				e.hold(MissingReport, pool, d.Node, "kubelet %s should declare %v, declares %v%s", d.KubeletVersion, d.Missing, d.Declared, runtimeHint(d))
			}
			if len(d.Extra) > 0 {
				e.hold(DeclaredButNotEnabled, pool, d.Node, "declares %v, which its kubelet (%s, gates as it reports them) does not enable: stale or forged", d.Extra, d.KubeletVersion)
			}
			if len(d.Undecided) > 0 {
				u := undecided{d.Runtime, d.RuntimeUnread}
				if d.RuntimeFrom == probes.RuntimeCRI {
					u.why = probes.CRIUnseen
				}
				unknown[u] = append(unknown[u], d)
			}
		}
		// One line per pool, runtime and reason: a fleet of unknown runtimes is not a line per node.
		for _, u := range slices.SortedFunc(maps.Keys(unknown), func(a, b undecided) int {
			return cmp.Or(strings.Compare(a.runtime, b.runtime), strings.Compare(a.why, b.why))
		}) {
			var nodes, features []string
			for _, d := range unknown[u] {
				nodes = append(nodes, d.Node)
				features = appendUniq(features, d.Undecided...)
			}
			slices.Sort(features)
			e.unchecked(ItemRuntimeFeatures, pool, nodes, "%s run %q: whether they must declare %v depends on what that runtime reports over the CRI, and %s, so those are unchecked", probes.NameNodes(nodes), u.runtime, features, nonEmpty(u.why, "nothing reported it"))
		}
		ps.MissingPct = 100 * float64(missing) / float64(ps.Nodes)
		if missing > 0 && ps.MissingPct/100 > e.t.MaxMissingRate {
			e.hold(MissingReportRate, pool, "", "%.0f%% of nodes miss declarations (threshold %.0f%%)", ps.MissingPct, 100*e.t.MaxMissingRate)
		}
		if len(ps.Digests) > 1 {
			hint := ""
			if e.run.PoolLabel.Label == "" {
				hint = " (no node carries a pool label, so a pool is every node of one kubelet version: pass --pool-label to group nodes as you run them)"
			}
			e.hold(MixedPool, pool, "", "nodes declare %d different sets%s", len(ps.Digests), hint)
		}
	}
	if e.run.KubeletUnchecked != "" {
		e.unchecked(ItemKubeletGates, "", nil, "%s", e.run.KubeletUnchecked)
	}
}

// checkFreshness holds a node whose Lease is old; a node without a Lease
// is held on its Ready heartbeat when that is old, and unknown otherwise.
func checkFreshness(e *evaluation) {
	for _, pool := range e.pools() {
		ps := e.summary[pool]
		var noLease []string
		for _, d := range e.byPool[pool] {
			switch {
			case d.HeartbeatAge > e.t.Freshness && d.NoLease:
				ps.StaleNodes = append(ps.StaleNodes, d.Node)
				e.hold(StaleDeclarations, pool, d.Node, "no Lease, and the Ready condition's heartbeat is %s old (freshness %s): its declarations may be stale", d.HeartbeatAge.Round(time.Second), e.t.Freshness)
			case d.HeartbeatAge > e.t.Freshness:
				ps.StaleNodes = append(ps.StaleNodes, d.Node)
				e.hold(StaleDeclarations, pool, d.Node, "lease last renewed %s ago (freshness %s): its declarations may be stale", d.HeartbeatAge.Round(time.Second), e.t.Freshness)
			case d.NoLease:
				noLease = append(noLease, d.Node)
			}
		}
		if len(noLease) > 0 {
			e.unchecked(ItemFreshness, pool, noLease, "%s keep no Lease in kube-node-lease: how fresh their declarations are is unknown", probes.NameNodes(noLease))
		}
	}
}

// checkPlacement judges every placement: a refusal counts only in the
// NodeDeclaredFeatures plugin's own words for the control plane's minor.
func checkPlacement(e *evaluation) {
	lacking := 0
	for _, p := range e.run.Placements {
		pool, feature := p.Pool, nonEmpty(p.Feature, "nothing")
		if p.Scheduler != "" {
			switch {
			case p.Declares && !p.Bound:
				e.hold(UnexpectedRefusal, pool, "", "scheduler %s refused a pod needing %q: %s", p.Scheduler, feature, p.Message)
			case !p.Declares && p.Bound && e.policy.Intent.plansWithoutPlugin(p.Scheduler):
				// As planned: --intent's check of that scheduler judges it.
			case !p.Declares && p.Bound:
				e.hold(SchedulerIgnoresDecl, pool, p.Node, "scheduler %s bound a pod needing %s to node %s, which does not declare it: pods that choose this scheduler bypass Node Declared Features", p.Scheduler, p.Feature, p.Node)
			case !p.Declares && !e.pluginWords(p):
				// A refusal in other words is not the plugin's: the scheduler's behaviour is unseen.
				e.hold(ForeignRefusal, pool, "", "scheduler %s refused a pod needing %s, not in the NodeDeclaredFeatures plugin's words (%q): %s", p.Scheduler, p.Feature, fixtures.SchedulerRefusal(e.minor, p.Feature), nonEmpty(p.Message, "no message"))
			}
			continue
		}
		if !p.Declares {
			lacking++
		}
		switch {
		case p.Declares && !p.Bound:
			e.hold(UnexpectedRefusal, pool, "", "a pod needing %q was refused: %s", feature, p.Message)
		case !p.Declares && p.Bound:
			e.hold(UnexpectedAdmission, pool, p.Node, "a pod needing %s was bound to a node that does not declare it", p.Feature)
		case !p.Declares && e.pluginWords(p):
			e.count(pool, func(ps *PoolSummary) { ps.Refusals++ })
		case !p.Declares:
			e.hold(ForeignRefusal, pool, "", "a pod needing %s was refused, not in the NodeDeclaredFeatures plugin's words (%q): %s", p.Feature, fixtures.SchedulerRefusal(e.minor, p.Feature), nonEmpty(p.Message, "no message"))
		}
	}
	for _, pool := range e.run.Unprobed {
		e.unchecked(ItemPlacementAndUpdates, pool, nil, "every node of the pool is stale, so no probe pod was placed or updated there")
	}
	if lacking == 0 && e.apiOn && e.probed() {
		e.unchecked(ItemPluginNotExercised, "", nil, "every probed pool (%s) declares every feature probed at scheduling: no probe pod could be refused, so the NodeDeclaredFeatures plugin was not seen refusing%s", strings.Join(e.pools(), ", "), e.syntheticHint())
	}
}

// checkLatency compares probe and control pods' decision times per pool.
// Control pods decided in under a millisecond count as one: a ratio
// against zero is never small. Only decisions the probe's watch timed
// count: the control plane's own stamps are whole seconds (0s, 1s), whose
// ratio can neither fire nor be trusted, so a pool with any such decision
// has its latency unchecked, named.
func checkLatency(e *evaluation) {
	for _, pool := range e.pools() {
		var probe, control []time.Duration
		var unmeasured []string
		for _, p := range e.run.Placements {
			switch {
			case p.Pool != pool || p.Scheduler != "":
			case p.DecisionFrom == probes.DecisionFromCondition:
				unmeasured = append(unmeasured, nonEmpty(p.Feature, "control"))
			case p.Feature == "":
				control = append(control, p.Decision)
			default:
				probe = append(probe, p.Decision)
			}
		}
		ps := e.summary[pool]
		if len(unmeasured) > 0 {
			e.unchecked(ItemDecisionLatency, pool, nil, "the probe's watch did not see %d decision(s) (%s): the control plane's whole-second stamps are all there is, so probe against control decision times is unchecked", len(unmeasured), strings.Join(unmeasured, ", "))
			continue
		}
		ps.ProbeP50, ps.ProbeP99, ps.ControlP50 = seconds(probe, 0.5), seconds(probe, 0.99), seconds(control, 0.5)
		if len(probe) == 0 || len(control) == 0 {
			continue
		}
		p50, c50 := quantile(probe, 0.5), max(quantile(control, 0.5), time.Millisecond)
		if p50 > e.t.MinLatency && float64(p50)/float64(c50) > e.t.MaxLatencyRatio {
			e.hold(SchedulerLatency, pool, "", "probe pods decided in %s against %s for control pods (ratio above %.1f)", p50, c50, e.t.MaxLatencyRatio)
		}
	}
}

// checkUpdates judges every update: a rejection counts only as
// NodeDeclaredFeatureValidator's 403 in its words; where several
// apiservers were asked, they must answer alike.
func checkUpdates(e *evaluation) {
	lacking := 0
	for _, u := range e.run.Updates {
		pool, feature := u.Pool, nonEmpty(u.Feature, "nothing")
		// A write admitted without the field that needs the feature was not judged.
		admitted := u.Code >= 200 && u.Code < 300 && u.Dropped == ""
		if !u.Declares {
			lacking++
		}
		switch {
		case u.Declares && !admitted:
			e.hold(UnexpectedUpdateRejection, pool, "", "an update needing %q was answered %d%s: %s", feature, u.Code, droppedText(u.Dropped), u.Message)
		case !u.Declares && admitted:
			e.hold(UnexpectedUpdateAdmission, pool, u.Node, "an update needing %s was admitted for a node that does not declare it", u.Feature)
		case !u.Declares && validatorWords(u.Code, u.Message, u):
			e.count(pool, func(ps *PoolSummary) { ps.Rejections++ })
		case !u.Declares:
			e.hold(ForeignRejection, pool, u.Node, "an update needing %s was answered %d, not by %s in its words: %s", u.Feature, u.Code, fixtures.ValidatorPlugin, nonEmpty(u.Message, "no message"))
		}
		if split, ok := splitAnswers(u); ok {
			e.hold(APIServerSplit, pool, u.Node, "an update needing %s: %s", feature, split)
		}
	}
	if lacking == 0 && e.apiOn && e.probed() && len(e.run.Updates) > 0 {
		e.unchecked(ItemValidatorNotExercised, "", nil, "every probed pool (%s) declares every feature probed at update: no update could be rejected, so NodeDeclaredFeatureValidator was not seen rejecting%s", strings.Join(e.pools(), ", "), e.syntheticHint())
	}
}

// validatorWords is whether an answer is NodeDeclaredFeatureValidator's
// refusal of u: a 403 with its message, naming the pod (or ResourceSlice),
// feature and node.
func validatorWords(code int32, message string, u probes.PoolUpdate) bool {
	if u.Kind == probes.SliceKind {
		return code == 403 && message == fixtures.SliceRejection(u.Pod, u.Node)
	}
	return code == 403 && message == fixtures.UpdateRejection(u.Pod, u.Feature, u.Node)
}

// splitAnswers says which apiservers admitted the update and which did
// not, where they did not all answer alike.
func splitAnswers(u probes.PoolUpdate) (string, bool) {
	var admitted, refused []string
	for _, ep := range slices.Sorted(maps.Keys(u.ByAPIServer)) {
		a := u.ByAPIServer[ep]
		if a.Code >= 200 && a.Code < 300 {
			admitted = append(admitted, ep)
		} else {
			refused = append(refused, fmt.Sprintf("%s (%d: %s)", ep, a.Code, a.Message))
		}
	}
	if len(admitted) == 0 || len(refused) == 0 {
		return "", false
	}
	return fmt.Sprintf("admitted by %s, refused by %s; through one address the answer depends on which apiserver is reached", strings.Join(admitted, ", "), strings.Join(refused, ", ")), true
}

// runtimeHint says which missing features the node's runtime decides: a
// runtime upgraded under a running kubelet leaves them out until it
// restarts (the kubelet reads runtime features once, at start).
func runtimeHint(d probes.Declaration) string {
	rel, ok := fixtures.RuntimeByVersion(d.Runtime)
	if !ok {
		return ""
	}
	var decided []string
	for _, f := range d.Missing {
		if fixtures.RuntimeDecides(f, rel.Reports) {
			decided = append(decided, f)
		}
	}
	if len(decided) == 0 {
		return ""
	}
	return fmt.Sprintf("; %v hang on what its runtime (%s) reports, which the kubelet reads once, at start: a runtime upgraded under a running kubelet is seen only after a kubelet restart (kubernetes/kubernetes#138099)", decided, d.Runtime)
}

// checkNodeWrites holds the write path's trust boundary: one node's
// kubelet identity writes its own declarations and no other node's, and
// the refusal is NodeRestriction's. NodeRestriction is the apiserver's, so
// a check not made is every pool's.
func checkNodeWrites(e *evaluation) {
	w := e.run.NodeWrites
	pool := func(node string) string {
		for _, d := range e.run.Declarations {
			if d.Node == node {
				return d.Pool
			}
		}
		return ""
	}
	as := "system:node:" + w.As
	switch {
	case w.Unchecked != "":
		e.unchecked(ItemNodeWrites, "", nil, "%s", w.Unchecked)
	case w.Own == nil:
		e.unchecked(ItemNodeWrites, "", nil, "no write was asked")
	case !w.Own.Admitted():
		e.unchecked(ItemNodeWrites, "", []string{w.As}, "as %s, a dry-run write of its own status.declaredFeatures was answered %d (%s): a refusal of another node's cannot be told from a refusal of every write",
			as, w.Own.Code, nonEmpty(w.Own.Message, "no message"))
	case w.Other == nil:
		e.v.NotApplicable = append(e.v.NotApplicable, Unchecked{Check: ItemNodeWrites, Pool: pool(w.As), Nodes: []string{w.As}, Reason: w.NotApplicable})
	default:
		checkForeignWrites(e, w, as, pool)
	}
}

// checkForeignWrites holds the write of another node's declarations, as
// asked through the cluster's address and of each apiserver at its own:
// every one must refuse it in NodeRestriction's words.
func checkForeignWrites(e *evaluation, w probes.NodeWrites, as string, pool func(string) string) {
	where := map[string]*probes.UpdateResult{"the cluster's address": w.Other}
	for ep, res := range w.OtherAt {
		where["apiserver "+ep] = res
	}
	held, odd := false, false
	for _, at := range slices.Sorted(maps.Keys(where)) {
		res := where[at]
		switch {
		case res.Admitted():
			held = true
			e.hold(ForeignNodeWrite, pool(res.Node), res.Node, "as %s, a dry-run write of %s's status.declaredFeatures through %s was admitted (%d): NodeRestriction did not refuse it", as, res.Node, at, res.Code)
		case res.Code != 403 || res.Message != fixtures.NodeRestrictionRefusal(w.As, res.Node):
			odd = true
			e.unchecked(ItemNodeWrites, "", []string{res.Node}, "as %s, a dry-run write of %s's status.declaredFeatures through %s was answered %d, not by NodeRestriction in its words: %s",
				as, res.Node, at, res.Code, nonEmpty(res.Message, "no message"))
		}
	}
	if held || odd {
		return
	}
	through := ""
	if n := len(w.OtherAt); n > 0 {
		through = fmt.Sprintf(", through the cluster's address and by each of %d apiservers at its own", n)
	}
	e.v.NodeWrites = fmt.Sprintf("as %s, a dry-run write of its own status.declaredFeatures was admitted and of %s's refused by NodeRestriction (403)%s", as, w.Other.Node, through)
}

// checkSynthetic says what the node that declares nothing showed; its
// placements and updates were judged with every pool's.
func checkSynthetic(e *evaluation) {
	s := e.run.Synthetic
	if s.Node == "" {
		return
	}
	refusals, rejections := 0, 0
	for _, p := range e.run.Placements {
		if p.Pool == probes.SyntheticPool && !p.Declares && e.pluginWords(p) {
			refusals++
		}
	}
	for _, u := range e.run.Updates {
		if u.Pool == probes.SyntheticPool && !u.Declares && validatorWords(u.Code, u.Message, u) {
			rejections++
		}
	}
	e.v.SyntheticNode = fmt.Sprintf("%s (declares nothing; added for %s, which no probed pool lacked): %d refusals in the NodeDeclaredFeatures plugin's words, %d rejections in NodeDeclaredFeatureValidator's; removed after the run",
		s.Node, strings.Join(s.Needed, " and "), refusals, rejections)
	if len(s.Evicted) > 0 {
		e.v.SyntheticNode += fmt.Sprintf("; pods of others that tolerate every taint were bound to it and removed with it: %s", strings.Join(s.Evicted, ", "))
	}
}

// checkRoutes holds each pool's WebSocket route to the oracle's: proxied
// to the kubelet only where the node declares ExtendWebSocketsToKubelet
// and the apiserver has the gate on; translated at the apiserver otherwise.
func checkRoutes(e *evaluation) {
	api := e.run.APIServer
	for _, r := range e.run.Routes {
		if r.Unchecked != "" {
			e.unchecked(ItemStreamingRoute, r.Pool, []string{r.Node}, "an exec into a pod on %s: %s", r.Node, r.Unchecked)
			continue
		}
		want := fixtures.TranslatedAtAPIServer
		if r.Declares && api.Enabled(fixtures.ExtendWebSocketsToKubelet) {
			want = fixtures.ProxiedToKubelet
		}
		if r.Route != want {
			declares := "declares"
			if !r.Declares {
				declares = "does not declare"
			}
			e.hold(StreamingRoute, r.Pool, r.Node, "an exec into a pod on %s, which %s %s, was %s, not %s (kube-apiserver has the gate %s)",
				r.Node, declares, fixtures.ExtendWebSocketsToKubelet, r.Route, want, api.Describe(fixtures.ExtendWebSocketsToKubelet))
		}
	}
}

// checkIntent holds the fleet and the control plane to the plan (--intent).
func checkIntent(e *evaluation) {
	if e.policy.Intent == nil {
		return
	}
	e.policy.Intent.check(e)
}

func droppedText(field string) string {
	if field == "" {
		return ""
	}
	return ", but the apiserver dropped its " + field + " (nothing was judged)"
}

// checkSignals holds each component's upstream series to the answers it
// gave the probe in its own words: the default scheduler's refusals by
// the plugin, each apiserver's rejections by the validator (asked of each
// apiserver where several are reached). A series that did not rise by as
// many is HOLD; one that could not be read is unchecked. Without any
// scheduler metrics URL none is read: the fingerprint says so.
func checkSignals(e *evaluation) {
	refusals := 0
	for _, p := range e.run.Placements {
		if p.Scheduler == "" && !p.Declares && !p.Bound && e.pluginWords(p) {
			refusals++
		}
	}
	rejections := map[string]int{}
	for _, u := range e.run.Updates {
		if u.Declares {
			continue
		}
		if len(u.ByAPIServer) == 0 {
			if validatorWords(u.Code, u.Message, u) {
				rejections[""]++
			}
			continue
		}
		for ep, a := range u.ByAPIServer {
			if validatorWords(a.Code, a.Message, u) {
				rejections[ep]++
			}
		}
	}
	for _, s := range e.run.Signals {
		answered, on := refusals, "kube-scheduler at "+s.Instance
		if s.Component == "kube-apiserver" {
			answered, on = rejections[s.Instance], "kube-apiserver "+nonEmpty(s.Instance, "behind the cluster's address")
		}
		switch {
		case answered == 0:
		case s.Unread != "":
			e.unchecked(ItemSignals, ControlPlane, nil, "%s on %s was not read (%s): whether it counted the %d answers it gave the probe is unchecked", s.Signal, on, s.Unread, answered)
		case s.Gauge && s.After < float64(answered):
			e.hold(SignalSilent, ControlPlane, "", "%s on %s held at most %g (from %g before) while %d of the probe's pods it refused in its own words waited: a dashboard or alert on it would not see them", s.Signal, on, s.After, s.Before, answered)
		case !s.Gauge && s.After-s.Before < float64(answered):
			e.hold(SignalSilent, ControlPlane, "", "%s on %s went from %g to %g while it gave the probe %d answers in its own words: a dashboard or alert on it would not see them", s.Signal, on, s.Before, s.After, answered)
		}
	}
}
