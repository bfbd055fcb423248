package verdict

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/kubeversion"
	"github.com/ndfq/ndfq/probes"
)

// Thresholds are the stop conditions' numbers.
type Thresholds struct {
	MaxMissingRate  float64       // fraction of a pool's nodes allowed to miss a declaration
	Freshness       time.Duration // a node whose lease is older is stale
	MaxLatencyRatio float64       // probe pod / control pod scheduling decision time
	MinLatency      time.Duration // ratios below this absolute decision time are noise
}

// DefaultThresholds hold on any miss, any stale node, and probe pods decided
// 5x slower than control pods once that is over 10s (below it, a small
// cluster's queueing noise dominates: 0.5s against 4s was seen on kind).
var DefaultThresholds = Thresholds{MaxMissingRate: 0, Freshness: 40 * time.Second, MaxLatencyRatio: 5, MinLatency: 10 * time.Second}

// Policy is how a run is judged: the thresholds and an operator's choices,
// each named in the verdict.
type Policy struct {
	Thresholds
	Intent *Intent // the fleet's plan (--intent); nil holds nothing to a plan
	// AcceptPartial gates on the run's scope alone (--accept-partial): nodes
	// outside the selector or the kubelet sample are listed as accepted,
	// not unchecked.
	AcceptPartial bool
	// HoldUnchecked makes every check not made a reason to hold (--hold-unchecked).
	HoldUnchecked bool
	// Baseline is an earlier report to compare with (--baseline); nil: none.
	Baseline *Baseline
	// ReleaseCheck looks up the oracle's check of a release against its
	// own sources (ndfq oracle check); a release the fleet runs that is
	// neither its minor's source nor found is unchecked by name. Nil finds none.
	ReleaseCheck func(kubeversion.Version) (fixtures.ReleaseCheck, bool)
}

// Reason is one stop condition that fired.
type Reason struct {
	Condition Condition `json:"condition"`
	Pool      string    `json:"pool,omitempty"`
	Node      string    `json:"node,omitempty"`
	Detail    string    `json:"detail"`
}

func (r Reason) String() string {
	where := r.Pool
	if r.Node != "" {
		where += "/" + r.Node
	}
	return fmt.Sprintf("%s [%s]: %s", r.Condition, where, r.Detail)
}

// PoolSummary is one pool's line in the report. Decision times are
// seconds; a pool with no such pod has null.
type PoolSummary struct {
	Pool        string   `json:"pool"`
	Kubelets    []string `json:"kubelets"`
	Nodes       int      `json:"nodes"`
	Digests     []string `json:"digests"`
	Declared    []string `json:"declared"` // what every node of the pool declares (each node's set is in nodes)
	MissingPct  float64  `json:"missingPercent"`
	StaleNodes  []string `json:"staleNodes"`
	Refusals    int      `json:"refusals"`   // in the plugin's words
	Rejections  int      `json:"rejections"` // in the validator's words
	ProbeP50    *float64 `json:"probeDecisionP50Seconds"`
	ProbeP99    *float64 `json:"probeDecisionP99Seconds"`
	ControlP50  *float64 `json:"controlDecisionP50Seconds"`
	KubeletGate string   `json:"kubeletNodeDeclaredFeatures"`
	// KubeletsRead are the nodes whose kubelet gave its gates: fewer than
	// Nodes when sampled (--kubelet-sample), denied or unreachable.
	KubeletsRead int `json:"kubeletsRead"`
}

// NodeSummary is one node's declared set, as the apiserver stores it.
type NodeSummary struct {
	Node     string   `json:"node"`
	Pool     string   `json:"pool"`
	Kubelet  string   `json:"kubelet"`
	Declared []string `json:"declared"`
	Digest   string   `json:"digest"`
	// The node's runtime, where its CRI features came from (probes'
	// RuntimeCRI, RuntimeRelease, RuntimeUnknown), what they were taken to
	// be and why they were not read on the node.
	Runtime       string   `json:"runtime,omitempty"`
	RuntimeFrom   string   `json:"runtimeFrom,omitempty"`
	RuntimeReport []string `json:"runtimeReport,omitempty"`
	RuntimeUnread string   `json:"runtimeUnread,omitempty"`
}

// ThresholdsJSON are the thresholds a report was judged by, in seconds.
type ThresholdsJSON struct {
	MaxMissingRate    float64 `json:"maxMissingRate"`
	FreshnessSeconds  float64 `json:"freshnessSeconds"`
	MaxLatencyRatio   float64 `json:"maxLatencyRatio"`
	MinLatencySeconds float64 `json:"minLatencySeconds"`
}

// Scope is what the run looked at.
type Scope struct {
	NodeSelector  string   `json:"nodeSelector"`  // "" for every node
	KubeletSample int      `json:"kubeletSample"` // 0 for every kubelet
	Pools         []string `json:"pools"`
	Nodes         int      `json:"nodes"`        // probed
	ClusterNodes  int      `json:"clusterNodes"` // in the cluster
	KubeletsRead  int      `json:"kubeletsRead"`
	AcceptPartial bool     `json:"acceptPartial"`
}

func (s Scope) String() string {
	out := fmt.Sprintf("%d of %d nodes in %d pools", s.Nodes, s.ClusterNodes, len(s.Pools))
	if s.NodeSelector != "" {
		out += fmt.Sprintf(" (--node-selector %q)", s.NodeSelector)
	}
	out += fmt.Sprintf("; %d of %d kubelets read", s.KubeletsRead, s.Nodes)
	if s.KubeletSample > 0 {
		out += fmt.Sprintf(" (--kubelet-sample %d)", s.KubeletSample)
	}
	if s.AcceptPartial {
		out += "; --accept-partial: the verdict is on this scope alone"
	}
	return out
}

// Unchecked is a check the probe could not make, and why.
type Unchecked struct {
	Check  string   `json:"check"`
	Pool   string   `json:"pool,omitempty"`
	Nodes  []string `json:"nodes,omitempty"`
	Reason string   `json:"reason"`
}

func (u Unchecked) String() string {
	if u.Pool == "" {
		return u.Check + ": " + u.Reason
	}
	return fmt.Sprintf("%s [%s]: %s", u.Check, u.Pool, u.Reason)
}

// ControlPlane is the pseudo-pool of reasons and checks about the control plane.
const ControlPlane = "control-plane"

// Report identity of `ndfq probe -o json|yaml`.
const (
	APIVersion = "ndfq.io/v1alpha1"
	Kind       = "ProbeReport"
)

// Verdict is the GO / HOLD / INCOMPLETE judgement of one probe run; as
// JSON it is the probe report (probe.schema.json). Lists are [] when empty.
type Verdict struct {
	APIVersion  string      `json:"apiVersion"`
	Kind        string      `json:"kind"`
	NDFQVersion string      `json:"ndfqVersion"`
	Time        string      `json:"time"`    // when the probe started, RFC 3339 UTC
	Context     string      `json:"context"` // the kubeconfig context probed, "" for none
	Outcome     Outcome     `json:"verdict"`
	Scope       Scope       `json:"scope"`
	Reasons     []Reason    `json:"reasons"`
	Unchecked   []Unchecked `json:"unchecked"`
	// Accepted are the checks not made that the operator chose to accept
	// (--accept-partial); NotApplicable those that do not apply, with why.
	Accepted      []Unchecked       `json:"accepted"`
	NotApplicable []Unchecked       `json:"notApplicable"`
	Thresholds    ThresholdsJSON    `json:"thresholds"`
	Pools         []PoolSummary     `json:"pools"`
	Nodes         []NodeSummary     `json:"nodes"`
	Fingerprint   map[string]string `json:"gateFingerprint"`
	Server        string            `json:"serverVersion"`
	TookSeconds   float64           `json:"tookSeconds"`
	// How the run was made: pools' label, probe pods' image and namespace,
	// and the schedulers placement went through besides the default one.
	PoolLabel  probes.PoolLabelChoice `json:"poolLabel"`
	Image      string                 `json:"image"`
	Namespace  string                 `json:"namespace"`
	RunID      string                 `json:"runID"`
	Schedulers []string               `json:"schedulers"`
	// The probe's own cost: requests to the apiserver, and (from the CLI)
	// the process's peak resident memory.
	APIRequests  int64 `json:"apiRequests"`
	PeakRSSBytes int64 `json:"peakRSSBytes"`
	// IntentChecked says the run was held to a plan (--intent).
	IntentChecked bool `json:"intentChecked"`
	// NodeWrites says what the node-write check saw, where it held.
	NodeWrites string `json:"nodeWrites,omitempty"`
	// SyntheticNode says what the node that declares nothing showed, where
	// the run added one (no real pool lacked a feature probed).
	SyntheticNode string `json:"syntheticNode,omitempty"`
	// Runtimes says where the judged nodes' runtime features came from.
	Runtimes string `json:"runtimes,omitempty"`
	// Signals says how each upstream series read moved around the
	// probe's own refusals and rejections.
	Signals string `json:"signals,omitempty"`
	// Baseline names the earlier report this run was compared with.
	Baseline string `json:"baseline,omitempty"`
	// OracleHeldTo are the releases the fleet runs whose own sources the
	// oracle was held to (a minor's source, or checked by ndfq oracle check).
	OracleHeldTo []string `json:"oracleHeldTo,omitempty"`
}

// Fired is the set of conditions that fired, sorted.
func (v Verdict) Fired() []Condition {
	var out []Condition
	for _, r := range v.Reasons {
		if !slices.Contains(out, r.Condition) {
			out = append(out, r.Condition)
		}
	}
	slices.Sort(out)
	return out
}

// Holds is whether condition fired for pool (and node, when given): "" matches any.
func (v Verdict) Holds(c Condition, pool, node string) bool {
	return slices.ContainsFunc(v.Reasons, func(r Reason) bool {
		return r.Condition == c && (pool == "" || r.Pool == pool) && (node == "" || r.Node == node)
	})
}

// evaluation is one run being judged: what the checks share.
type evaluation struct {
	run     *probes.Run
	policy  Policy
	t       Thresholds
	v       *Verdict
	minor   string // the control plane's
	apiOn   bool   // kube-apiserver has NodeDeclaredFeatures on
	byPool  map[string][]probes.Declaration
	summary map[string]*PoolSummary
}

func (e *evaluation) hold(c Condition, pool, node, format string, args ...any) {
	e.v.Reasons = append(e.v.Reasons, Reason{Condition: c, Pool: pool, Node: node, Detail: fmt.Sprintf(format, args...)})
}

func (e *evaluation) unchecked(item, pool string, nodes []string, format string, args ...any) {
	e.v.Unchecked = append(e.v.Unchecked, Unchecked{Check: item, Pool: pool, Nodes: nodes, Reason: fmt.Sprintf(format, args...)})
}

// partial is a check left out by the run's scope: accepted where the
// operator chose to gate on the scope alone, unchecked otherwise.
func (e *evaluation) partial(item, pool string, nodes []string, format string, args ...any) {
	u := Unchecked{Check: item, Pool: pool, Nodes: nodes, Reason: fmt.Sprintf(format, args...)}
	if e.policy.AcceptPartial {
		e.v.Accepted = append(e.v.Accepted, u)
		return
	}
	e.v.Unchecked = append(e.v.Unchecked, u)
}

func (e *evaluation) pools() []string { return slices.Sorted(maps.Keys(e.byPool)) }

// probed is whether any probe pod was placed.
func (e *evaluation) probed() bool { return len(e.run.Placements) > 0 }

// pluginWords is whether a refusal is the NodeDeclaredFeatures plugin's,
// in the words of the control plane's minor.
func (e *evaluation) pluginWords(p probes.PoolProbe) bool {
	return p.Feature != "" && !p.Bound && p.Message != "" && strings.Contains(p.Message, fixtures.SchedulerRefusal(e.minor, p.Feature))
}

// count adds to a fleet pool's summary; the synthetic node is no pool of
// the fleet, and its refusals and rejections are in Verdict.SyntheticNode.
func (e *evaluation) count(pool string, add func(*PoolSummary)) {
	if ps := e.summary[pool]; ps != nil {
		add(ps)
	}
}

// syntheticHint says why no synthetic node showed what no pool could.
func (e *evaluation) syntheticHint() string {
	if why := e.run.Synthetic.Unchecked; why != "" {
		return ": " + why
	}
	return ""
}

// pluginRefusal is a default-scheduler refusal in the plugin's words, if any.
func (e *evaluation) pluginRefusal() (string, bool) {
	for _, p := range e.run.Placements {
		if p.Scheduler == "" && e.pluginWords(p) {
			return p.Message, true
		}
	}
	return "", false
}

// Evaluate judges a probe run: every check of the table, in order.
func Evaluate(run *probes.Run, policy Policy) Verdict {
	t := policy.Thresholds
	v := Verdict{APIVersion: APIVersion, Kind: Kind, Time: run.Started.UTC().Format(time.RFC3339),
		Reasons: []Reason{}, Unchecked: []Unchecked{}, Accepted: []Unchecked{}, NotApplicable: []Unchecked{}, Pools: []PoolSummary{}, Nodes: []NodeSummary{},
		Thresholds: ThresholdsJSON{MaxMissingRate: t.MaxMissingRate, FreshnessSeconds: t.Freshness.Seconds(), MaxLatencyRatio: t.MaxLatencyRatio, MinLatencySeconds: t.MinLatency.Seconds()},
		Server:     run.ServerVersion, Fingerprint: map[string]string{}, TookSeconds: run.Took.Seconds(),
		PoolLabel: run.PoolLabel, Image: run.Image, Namespace: run.Namespace, RunID: run.RunID, Schedulers: orEmpty(run.Schedulers), APIRequests: run.APIRequests,
		IntentChecked: policy.Intent != nil}
	e := &evaluation{run: run, policy: policy, t: t, v: &v, minor: kubeversion.MinorOf(run.ServerVersion),
		apiOn: run.APIServer.Enabled(fixtures.NodeDeclaredFeatures), byPool: map[string][]probes.Declaration{}, summary: map[string]*PoolSummary{}}
	e.summarize()
	for _, c := range checks {
		c.run(e)
	}
	for _, pool := range e.pools() {
		v.Pools = append(v.Pools, *e.summary[pool])
	}
	if policy.HoldUnchecked {
		for _, u := range v.Unchecked {
			v.Reasons = append(v.Reasons, Reason{Condition: CheckNotMade, Pool: u.Pool, Detail: u.Check + ": " + u.Reason})
		}
	}
	v.Runtimes = runtimesFrom(run.Declarations)
	v.Signals = signalsLine(run.Signals)
	v.decide()
	return v
}

// runtimesFrom says where the judged nodes' runtime features came from:
// "read over the CRI on 9 nodes, from ndfq's runtime table on 1".
func runtimesFrom(decls []probes.Declaration) string {
	counts := map[string]int{}
	for _, d := range decls {
		if d.RuntimeFrom != "" {
			counts[d.RuntimeFrom]++
		}
	}
	var parts []string
	for _, from := range []struct{ key, words string }{
		{probes.RuntimeCRI, "read over the CRI"}, {probes.RuntimeRelease, "from ndfq's runtime table"}, {probes.RuntimeUnknown, "unknown (nothing reported them)"},
	} {
		switch n := counts[from.key]; n {
		case 0:
		case 1:
			parts = append(parts, from.words+" on 1 node")
		default:
			parts = append(parts, fmt.Sprintf("%s on %d nodes", from.words, n))
		}
	}
	return strings.Join(parts, ", ")
}

// summarize groups the run by pool: each pool's line, the nodes' sets, the
// fingerprint and the scope, before any check looks.
func (e *evaluation) summarize() {
	run, v, ndf := e.run, e.v, fixtures.NodeDeclaredFeatures
	v.Fingerprint["kube-apiserver"] = run.APIServer.Describe(ndf)
	if run.Scheduler != nil {
		v.Fingerprint["kube-scheduler"] = run.Scheduler.Describe(ndf)
	}
	for ep, gates := range run.APIServers {
		v.Fingerprint["kube-apiserver at "+ep] = gates.Describe(ndf)
	}
	for _, d := range run.Declarations {
		e.byPool[d.Pool] = append(e.byPool[d.Pool], d)
		v.Nodes = append(v.Nodes, NodeSummary{Node: d.Node, Pool: d.Pool, Kubelet: d.KubeletVersion, Declared: orEmpty(d.Declared), Digest: d.Digest,
			Runtime: d.Runtime, RuntimeFrom: d.RuntimeFrom, RuntimeReport: d.RuntimeReport, RuntimeUnread: d.RuntimeUnread})
	}
	for _, pool := range e.pools() {
		ps := &PoolSummary{Pool: pool, StaleNodes: []string{}}
		gateStates := map[string]bool{}
		for _, d := range e.byPool[pool] {
			ps.Nodes++
			ps.Kubelets = appendUniq(ps.Kubelets, d.KubeletVersion)
			ps.Digests = appendUniq(ps.Digests, d.Digest)
			if ps.Nodes == 1 {
				ps.Declared = slices.Clone(orEmpty(d.Declared)) // narrowed below: never the node's own slice
			} else {
				ps.Declared = slices.DeleteFunc(ps.Declared, func(f string) bool { return !slices.Contains(d.Declared, f) })
			}
			switch {
			case d.Unchecked != "":
				gateStates["not read"] = true
			case d.NotSampled:
				gateStates["not sampled"] = true
			case d.Unreachable == "":
				ps.KubeletsRead++
				fallthrough
			default:
				gateStates[d.Gates.Describe(ndf)] = true
			}
		}
		ps.KubeletGate = strings.Join(slices.Sorted(maps.Keys(gateStates)), ", ")
		v.Fingerprint["kubelets of "+pool] = ps.KubeletGate
		e.summary[pool] = ps
		v.Scope.KubeletsRead += ps.KubeletsRead
	}
	v.Scope.NodeSelector, v.Scope.KubeletSample, v.Scope.AcceptPartial = run.NodeSelector, run.KubeletSample, e.policy.AcceptPartial
	v.Scope.Pools, v.Scope.Nodes = orEmpty(e.pools()), len(run.Declarations)
	v.Scope.ClusterNodes = v.Scope.Nodes + len(run.OutOfScope)
}

// decide is the outcome: any reason holds; otherwise a check that could
// not be made leaves it INCOMPLETE.
func (v *Verdict) decide() {
	switch {
	case len(v.Reasons) > 0:
		v.Outcome = HOLD
	case len(v.Unchecked) > 0:
		v.Outcome = INCOMPLETE
	default:
		v.Outcome = GO
	}
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func appendUniq(list []string, s ...string) []string {
	for _, x := range s {
		if !slices.Contains(list, x) {
			list = append(list, x)
		}
	}
	return list
}

func quantile(d []time.Duration, q float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	idx := int(q * float64(len(s)-1))
	return s[idx]
}

// seconds is the q-quantile in seconds (millisecond resolution); nil for none.
func seconds(d []time.Duration, q float64) *float64 {
	if len(d) == 0 {
		return nil
	}
	s := quantile(d, q).Round(time.Millisecond).Seconds()
	return &s
}

// fmtSeconds renders a decision time for the text and markdown tables.
func fmtSeconds(s *float64) string {
	if s == nil {
		return "-"
	}
	return time.Duration(*s * float64(time.Second)).Round(time.Millisecond).String()
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// apiServerGates are the apiserver gates declarations depend on in a
// control plane of minor: the feature's own and each probe's field gate
// (an apiserver with one off drops or refuses what a pod asks for).
func apiServerGates(minor string) []string {
	gates := []string{fixtures.NodeDeclaredFeatures}
	for _, p := range fixtures.FeaturePods(minor) {
		gates = append(gates, p.APIServerGate)
	}
	for _, u := range fixtures.FeatureUpdates(minor) {
		gates = append(gates, u.APIServerGate)
	}
	slices.Sort(gates)
	return slices.Compact(gates)
}

// apiServersDisagree says, where the apiservers read one by one do not all
// have gate on (or all off: a gate an older emulated minor does not know is
// off there too), which has it how.
func apiServersDisagree(byEndpoint map[string]probes.Gates, gate string) (string, bool) {
	on := map[bool]bool{}
	var parts []string
	for _, ep := range slices.Sorted(maps.Keys(byEndpoint)) {
		on[byEndpoint[ep].Enabled(gate)] = true
		parts = append(parts, fmt.Sprintf("%s at %s", byEndpoint[ep].Describe(gate), ep))
	}
	if len(on) < 2 {
		return "", false
	}
	return fmt.Sprintf("the %d kube-apiservers behind the cluster's address disagree on %s: %s; whether a request that needs it is honoured depends on which one answers", len(byEndpoint), gate, strings.Join(parts, "; ")), true
}

// signalsLine is each signal read, where, and how it moved.
func signalsLine(readings []probes.SignalReading) string {
	var parts []string
	for _, s := range readings {
		on := s.Component
		if s.Instance != "" {
			on += " " + s.Instance
		}
		if s.Unread != "" {
			parts = append(parts, fmt.Sprintf("%s on %s unread (%s)", s.Signal, on, s.Unread))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s on %s %g -> %g", s.Signal, on, s.Before, s.After))
	}
	return strings.Join(parts, "; ")
}
