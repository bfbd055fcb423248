package rollout

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/kubeversion"
	"github.com/ndfq/ndfq/probes"
)

// Thresholds are the stop conditions of a rollout gate.
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

// Condition is a stop condition's name, as reports and the JSON print it.
type Condition string

// The stop conditions of a rollout gate.
const (
	RolloutOrder              Condition = "rollout-order"                  // the scheduler or kubelets have the gate on before the apiserver
	KubeletUnreachable        Condition = "kubelet-unreachable"            // a kubelet's gates cannot be read, so its declarations cannot be checked
	MissingReport             Condition = "missing-report"                 // a node declares less than its kubelet must
	DeclaredButNotEnabled     Condition = "declared-but-not-enabled"       // a node declares what its kubelet does not enable: stale or forged
	StaleDeclarations         Condition = "stale-declarations"             // a node's lease is older than the freshness threshold
	MissingReportRate         Condition = "missing-report-rate"            // too many of a pool's nodes miss declarations
	MixedPool                 Condition = "mixed-pool"                     // a pool's nodes declare different sets
	UnexpectedRefusal         Condition = "unexpected-refusal"             // a pod was refused on a pool that declares what it needs
	UnexpectedAdmission       Condition = "unexpected-admission"           // a pod was bound to a node that does not declare what it needs
	SchedulerLatency          Condition = "scheduler-latency"              // probe pods are decided much slower than control pods
	UnexpectedUpdateRejection Condition = "unexpected-update-rejection"    // an update was rejected on a pool that declares what it needs
	UnexpectedUpdateAdmission Condition = "unexpected-update-admission"    // an update was admitted for a node that does not declare what it needs
	GateFingerprint           Condition = "gate-fingerprint"               // the control-plane components and kubelets disagree on the gate
	IntentMismatch            Condition = "intent-mismatch"                // a node's kubelet, gates or declarations differ from the operator's plan (--intent)
	SchedulerIgnoresDecl      Condition = "scheduler-ignores-declarations" // a second scheduler (--scheduler-name) bound a pod to a node that does not declare what it needs
	CheckNotMade              Condition = "check-not-made"                 // a check that applies could not be made (--hold-unchecked)
)

// Conditions lists every stop condition (probe.schema.json enumerates them).
var Conditions = []Condition{RolloutOrder, KubeletUnreachable, MissingReport, DeclaredButNotEnabled, StaleDeclarations, MissingReportRate, MixedPool, UnexpectedRefusal, UnexpectedAdmission, SchedulerLatency, UnexpectedUpdateRejection, UnexpectedUpdateAdmission, GateFingerprint, IntentMismatch, SchedulerIgnoresDecl, CheckNotMade}

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
	Refusals    int      `json:"refusals"`
	Rejections  int      `json:"rejections"`
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
}

// ThresholdsJSON are the thresholds a report was judged by, in seconds.
type ThresholdsJSON struct {
	MaxMissingRate    float64 `json:"maxMissingRate"`
	FreshnessSeconds  float64 `json:"freshnessSeconds"`
	MaxLatencyRatio   float64 `json:"maxLatencyRatio"`
	MinLatencySeconds float64 `json:"minLatencySeconds"`
}

// Verdicts of a rollout gate. INCOMPLETE: nothing held, but a check that
// applies could not be made, so GO would say more than was seen.
const (
	GO         = "GO"
	HOLD       = "HOLD"
	INCOMPLETE = "INCOMPLETE"
)

// Unchecked is a check the probe could not make, and why.
type Unchecked struct {
	Check  string `json:"check"`
	Pool   string `json:"pool,omitempty"`
	Reason string `json:"reason"`
}

func (u Unchecked) String() string {
	if u.Pool == "" {
		return u.Check + ": " + u.Reason
	}
	return fmt.Sprintf("%s [%s]: %s", u.Check, u.Pool, u.Reason)
}

// Report identity of `ndfq probe -o json|yaml`.
const (
	APIVersion = "ndfq.io/v1alpha1"
	Kind       = "ProbeReport"
)

// Gate is the GO / HOLD / INCOMPLETE verdict of one probe run; as JSON it
// is the probe report (probe.schema.json). Lists are [] when empty.
type Gate struct {
	APIVersion  string            `json:"apiVersion"`
	Kind        string            `json:"kind"`
	NDFQVersion string            `json:"ndfqVersion"`
	Time        string            `json:"time"`    // when the probe started, RFC 3339 UTC
	Context     string            `json:"context"` // the kubeconfig context probed, "" for none
	Verdict     string            `json:"verdict"`
	Reasons     []Reason          `json:"reasons"`
	Unchecked   []Unchecked       `json:"unchecked"`
	Thresholds  ThresholdsJSON    `json:"thresholds"`
	Pools       []PoolSummary     `json:"pools"`
	Nodes       []NodeSummary     `json:"nodes"`
	Fingerprint map[string]string `json:"gateFingerprint"`
	Server      string            `json:"serverVersion"`
	TookSeconds float64           `json:"tookSeconds"`
	// How the run was made: pools' label, probe pods' image and namespace,
	// and the schedulers placement went through besides the default one.
	PoolLabel  probes.PoolLabelChoice `json:"poolLabel"`
	Image      string                 `json:"image"`
	Namespace  string                 `json:"namespace"`
	Schedulers []string               `json:"schedulers"`
	// The probe's own cost: requests to the apiserver, and (from the CLI)
	// the process's peak resident memory.
	APIRequests  int64 `json:"apiRequests"`
	PeakRSSBytes int64 `json:"peakRSSBytes"`

	intentChecked bool // CheckIntent ran
}

// Fired is the set of conditions that fired, sorted.
func (g Gate) Fired() []Condition {
	var out []Condition
	for _, r := range g.Reasons {
		if !slices.Contains(out, r.Condition) {
			out = append(out, r.Condition)
		}
	}
	slices.Sort(out)
	return out
}

// Holds is whether condition fired for pool (and node, when given): "" matches any.
func (g Gate) Holds(c Condition, pool, node string) bool {
	return slices.ContainsFunc(g.Reasons, func(r Reason) bool {
		return r.Condition == c && (pool == "" || r.Pool == pool) && (node == "" || r.Node == node)
	})
}

// Evaluate applies the stop conditions to a probe run.
func Evaluate(run *probes.Run, t Thresholds) Gate {
	g := Gate{APIVersion: APIVersion, Kind: Kind, Time: run.Started.UTC().Format(time.RFC3339),
		Reasons: []Reason{}, Unchecked: []Unchecked{}, Pools: []PoolSummary{}, Nodes: []NodeSummary{},
		Thresholds: ThresholdsJSON{MaxMissingRate: t.MaxMissingRate, FreshnessSeconds: t.Freshness.Seconds(), MaxLatencyRatio: t.MaxLatencyRatio, MinLatencySeconds: t.MinLatency.Seconds()},
		Server:     run.ServerVersion, Fingerprint: map[string]string{}, TookSeconds: run.Took.Seconds(),
		PoolLabel: run.PoolLabel, Image: run.Image, Namespace: run.Namespace, Schedulers: orEmpty(run.Schedulers), APIRequests: run.APIRequests}
	add := func(cond Condition, pool, node, format string, args ...any) {
		g.Reasons = append(g.Reasons, Reason{Condition: cond, Pool: pool, Node: node, Detail: fmt.Sprintf(format, args...)})
	}
	ndf := fixtures.NodeDeclaredFeatures
	g.Fingerprint["kube-apiserver"] = run.APIServer.Describe(ndf)
	if run.Scheduler != nil {
		g.Fingerprint["kube-scheduler"] = run.Scheduler.Describe(ndf)
	}
	byPool := map[string][]probes.Declaration{}
	anyPublished := false
	for _, d := range run.Declarations {
		byPool[d.Pool] = append(byPool[d.Pool], d)
		anyPublished = anyPublished || d.Published
		g.Nodes = append(g.Nodes, NodeSummary{Node: d.Node, Pool: d.Pool, Kubelet: d.KubeletVersion, Declared: orEmpty(d.Declared), Digest: d.Digest})
	}
	// Rollout order: the apiserver first, then the scheduler, then kubelets.
	apiOn := run.APIServer.Enabled(ndf)
	if run.Scheduler != nil && run.Scheduler.Enabled(ndf) && !apiOn {
		add(RolloutOrder, "control-plane", "", "kube-scheduler runs the NodeDeclaredFeatures plugin while kube-apiserver has the gate off: turn the apiserver on first, then the scheduler")
	}
	for _, d := range run.Declarations {
		if d.Gates.Enabled(ndf) && !apiOn {
			stored := "none are stored"
			if d.Published {
				stored = fmt.Sprintf("the apiserver stored %v anyway", d.Declared)
			}
			add(RolloutOrder, d.Pool, d.Node, "kubelet %s has NodeDeclaredFeatures on while kube-apiserver has it off (%s): the apiserver goes first", d.KubeletVersion, stored)
		}
	}
	for _, pool := range slices.Sorted(maps.Keys(byPool)) {
		ps := PoolSummary{Pool: pool, StaleNodes: []string{}}
		missing := 0
		gateStates := map[string]bool{}
		unknown := map[string][]probes.Declaration{} // runtime -> its nodes, where ndfq does not know it
		for _, d := range byPool[pool] {
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
			case d.Unreachable == "":
				ps.KubeletsRead++
				fallthrough
			default:
				gateStates[d.Gates.Describe(ndf)] = true
			}
			if d.Unreachable != "" {
				add(KubeletUnreachable, pool, d.Node, "its gates cannot be read, so its declarations %v cannot be checked: %s", d.Declared, strings.Join(strings.Fields(d.Unreachable), " "))
			}
			if len(d.Missing) > 0 {
				missing++
				add(MissingReport, pool, d.Node, "kubelet %s should declare %v, declares %v", d.KubeletVersion, d.Missing, d.Declared)
			}
			if len(d.Extra) > 0 {
				add(DeclaredButNotEnabled, pool, d.Node, "declares %v, which its kubelet (%s, gates as it reports them) does not enable: stale or forged", d.Extra, d.KubeletVersion)
			}
			if len(d.Undecided) > 0 {
				unknown[d.Runtime] = append(unknown[d.Runtime], d)
			}
			if d.HeartbeatAge > t.Freshness {
				ps.StaleNodes = append(ps.StaleNodes, d.Node)
				add(StaleDeclarations, pool, d.Node, "lease last renewed %s ago (freshness %s): its declarations may be stale", d.HeartbeatAge.Round(time.Second), t.Freshness)
			}
		}
		// One line per pool and runtime: a fleet of unknown runtimes is not a line per node.
		for _, rt := range slices.Sorted(maps.Keys(unknown)) {
			var nodes, features []string
			for _, d := range unknown[rt] {
				nodes = append(nodes, d.Node)
				for _, f := range d.Undecided {
					features = appendUniq(features, f)
				}
			}
			sort.Strings(features)
			g.Unchecked = append(g.Unchecked, Unchecked{Check: "runtime-features", Pool: pool,
				Reason: fmt.Sprintf("%s run %q, a runtime ndfq does not know: whether they must declare %v depends on what that runtime reports over the CRI, so those are unchecked", probes.NameNodes(nodes), rt, features)})
		}
		var states []string
		for s := range gateStates {
			states = append(states, s)
		}
		sort.Strings(states)
		ps.KubeletGate = strings.Join(states, ", ")
		g.Fingerprint["kubelets of "+pool] = ps.KubeletGate
		ps.MissingPct = 100 * float64(missing) / float64(ps.Nodes)
		if ps.MissingPct/100 > t.MaxMissingRate && missing > 0 {
			add(MissingReportRate, pool, "", "%.0f%% of nodes miss declarations (threshold %.0f%%)", ps.MissingPct, 100*t.MaxMissingRate)
		}
		if len(ps.Digests) > 1 {
			hint := ""
			if run.PoolLabel.Label == "" {
				hint = " (no node carries a pool label, so a pool is every node of one kubelet version: pass --pool-label to group nodes as you run them)"
			}
			add(MixedPool, pool, "", "nodes declare %d different sets%s", len(ps.Digests), hint)
		}
		var probe, control []time.Duration
		for _, p := range run.Placements {
			if p.Pool != pool {
				continue
			}
			if p.Scheduler != "" {
				switch {
				case p.Declares && !p.Bound:
					add(UnexpectedRefusal, pool, "", "scheduler %s refused a pod needing %q: %s", p.Scheduler, nonEmpty(p.Feature, "nothing"), p.Message)
				case !p.Declares && p.Bound:
					add(SchedulerIgnoresDecl, pool, p.Node, "scheduler %s bound a pod needing %s to node %s, which does not declare it: pods that choose this scheduler bypass Node Declared Features", p.Scheduler, p.Feature, p.Node)
				}
				continue // latency and refusal counts are the default scheduler's
			}
			if p.Feature == "" {
				control = append(control, p.Decision)
			} else {
				probe = append(probe, p.Decision)
			}
			switch {
			case p.Declares && !p.Bound:
				add(UnexpectedRefusal, pool, "", "a pod needing %q was refused: %s", nonEmpty(p.Feature, "nothing"), p.Message)
			case !p.Declares && p.Bound:
				add(UnexpectedAdmission, pool, p.Node, "a pod needing %s was bound to a node that does not declare it", p.Feature)
			case !p.Declares:
				ps.Refusals++
			}
		}
		ps.ProbeP50, ps.ProbeP99, ps.ControlP50 = seconds(probe, 0.5), seconds(probe, 0.99), seconds(control, 0.5)
		if len(probe) > 0 && len(control) > 0 {
			p50, c50 := quantile(probe, 0.5), quantile(control, 0.5)
			if p50 > t.MinLatency && c50 > 0 && float64(p50)/float64(c50) > t.MaxLatencyRatio {
				add(SchedulerLatency, pool, "", "probe pods decided in %s against %s for control pods (ratio above %.1f)", p50, c50, t.MaxLatencyRatio)
			}
		}
		for _, u := range run.Updates {
			if u.Pool != pool {
				continue
			}
			switch {
			case u.Declares && u.Code != 200:
				add(UnexpectedUpdateRejection, pool, "", "an update needing %q was answered %d: %s", nonEmpty(u.Feature, "nothing"), u.Code, u.Message)
			case !u.Declares && u.Code == 200:
				add(UnexpectedUpdateAdmission, pool, "", "an update needing %s was admitted for a node that does not declare it", u.Feature)
			case !u.Declares:
				ps.Rejections++
			}
		}
		g.Pools = append(g.Pools, ps)
	}
	switch {
	case anyPublished && !run.APIServer.Enabled(ndf):
		add(GateFingerprint, "", "", "kubelets declare features but kube-apiserver has NodeDeclaredFeatures %s: updates are not validated", run.APIServer.Describe(ndf))
	case run.Scheduler != nil && run.Scheduler.Enabled(ndf) != run.APIServer.Enabled(ndf):
		add(GateFingerprint, "", "", "kube-scheduler has NodeDeclaredFeatures %s, kube-apiserver %s", run.Scheduler.Describe(ndf), run.APIServer.Describe(ndf))
	case run.Scheduler != nil && anyPublished && !run.Scheduler.Enabled(ndf):
		add(GateFingerprint, "", "", "kubelets declare features but kube-scheduler has NodeDeclaredFeatures off: placement ignores them")
	}
	if run.Scheduler == nil {
		// Without its metrics, the plugin's own refusal message is evidence
		// that the default scheduler runs it (a plain cluster's scheduler
		// listens on loopback only).
		if seen, ok := pluginRefusal(run); ok {
			g.Fingerprint["kube-scheduler"] = "plugin seen refusing (no metrics read)"
			if !apiOn {
				add(RolloutOrder, "control-plane", "", "kube-scheduler refused a pod with the NodeDeclaredFeatures plugin's message (%q) while kube-apiserver has the gate off: turn the apiserver on first, then the scheduler", seen)
			}
		} else {
			g.Unchecked = append(g.Unchecked, Unchecked{Check: "scheduler-gates", Pool: "control-plane",
				Reason: "kube-scheduler's gates were not read (no --scheduler-metrics-url) and no probe pod was refused with the plugin's message: whether it runs the plugin, and the rollout order against the apiserver, are unchecked"})
		}
	}
	for ep, gates := range run.APIServers {
		g.Fingerprint["kube-apiserver at "+ep] = gates.Describe(ndf)
	}
	for _, gate := range apiServerGates(kubeversion.MinorOf(run.ServerVersion)) {
		if detail, ok := apiServersDisagree(run.APIServers, gate); ok {
			add(GateFingerprint, "control-plane", "", "%s", detail)
		}
	}
	if run.APIServersUnchecked != "" {
		g.Unchecked = append(g.Unchecked, Unchecked{Check: "apiserver-gates", Pool: "control-plane", Reason: run.APIServersUnchecked})
	}
	if run.KubeletUnchecked != "" {
		g.Unchecked = append(g.Unchecked, Unchecked{Check: "kubelet-gates", Reason: run.KubeletUnchecked})
	}
	for _, pool := range run.Unprobed {
		g.Unchecked = append(g.Unchecked, Unchecked{Check: "placement-and-updates", Pool: pool,
			Reason: "every node of the pool is stale, so no probe pod was placed or updated there"})
	}
	g.decide()
	return g
}

// pluginRefusal is a default-scheduler refusal in the words of the
// NodeDeclaredFeatures plugin of the control plane's minor, if any.
func pluginRefusal(run *probes.Run) (string, bool) {
	minor := kubeversion.MinorOf(run.ServerVersion)
	for _, p := range run.Placements {
		if p.Scheduler == "" && p.Feature != "" && !p.Bound && p.Message != "" && strings.Contains(p.Message, fixtures.SchedulerRefusal(minor, p.Feature)) {
			return p.Message, true
		}
	}
	return "", false
}

// HoldUnchecked makes every check that could not be made a reason to
// hold (--hold-unchecked): a gate that must not pass on less than all.
func (g *Gate) HoldUnchecked() {
	for _, u := range g.Unchecked {
		g.Reasons = append(g.Reasons, Reason{Condition: CheckNotMade, Pool: u.Pool, Detail: u.Check + ": " + u.Reason})
	}
	g.decide()
}

// decide is the verdict: any reason holds; otherwise a check that could
// not be made leaves it INCOMPLETE.
func (g *Gate) decide() {
	switch {
	case len(g.Reasons) > 0:
		g.Verdict = HOLD
	case len(g.Unchecked) > 0:
		g.Verdict = INCOMPLETE
	default:
		g.Verdict = GO
	}
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func appendUniq(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
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

// WriteText is the terminal form.
func (g Gate) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%s  (server %s, probed in %.0fs with %d API requests)\n%s\n\n", g.Verdict, g.Server, g.TookSeconds, g.APIRequests, g.how())
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POOL\tKUBELET\tNODES\tREAD\tNDF GATE\tDIGEST\tMISSING\tSTALE\tREFUSALS\tREJECTIONS\tPROBE P50/P99\tCONTROL P50")
	for _, p := range g.Pools {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%.0f%%\t%d\t%d\t%d\t%s/%s\t%s\n", p.Pool, strings.Join(p.Kubelets, ","), p.Nodes, p.KubeletsRead, p.KubeletGate,
			strings.Join(p.Digests, ","), p.MissingPct, len(p.StaleNodes), p.Refusals, p.Rejections, fmtSeconds(p.ProbeP50), fmtSeconds(p.ProbeP99), fmtSeconds(p.ControlP50))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\ngate fingerprint: kube-apiserver %s", g.Fingerprint["kube-apiserver"])
	if s, ok := g.Fingerprint["kube-scheduler"]; ok {
		fmt.Fprintf(w, ", kube-scheduler %s", s)
	}
	fmt.Fprintln(w)
	for _, r := range g.Reasons {
		fmt.Fprintf(w, "HOLD: %s\n", r)
	}
	for _, u := range g.Unchecked {
		fmt.Fprintf(w, "NOT CHECKED: %s\n", u)
	}
	return nil
}

// how says what pools are and what the probe pods ran, for the reader.
func (g Gate) how() string {
	pools := "pools by kubelet version (no node carries a well-known pool label)"
	switch g.PoolLabel.Source {
	case "flag":
		pools = "pools by --pool-label " + g.PoolLabel.Label + " and kubelet version"
	case "well-known":
		pools = "pools by " + g.PoolLabel.Label + " (the first well-known pool label present) and kubelet version"
	}
	s := fmt.Sprintf("%s; probe pods %s in namespace %s", pools, g.Image, g.Namespace)
	if len(g.Schedulers) > 0 {
		s += "; placement also through " + strings.Join(g.Schedulers, ", ")
	}
	return s
}

// WriteMarkdown is the form for tickets and CI summaries.
func (g Gate) WriteMarkdown(w io.Writer) error {
	fmt.Fprintf(w, "# ndfq probe: %s\n\nServer %s, probed in %.0fs. %s.\n\n", g.Verdict, g.Server, g.TookSeconds, g.how())
	if len(g.Reasons) > 0 {
		fmt.Fprintf(w, "## Why HOLD\n\n")
		for _, r := range g.Reasons {
			fmt.Fprintf(w, "- %s\n", r)
		}
		fmt.Fprintln(w)
	}
	if len(g.Unchecked) > 0 {
		fmt.Fprintf(w, "## Not checked\n\n")
		for _, u := range g.Unchecked {
			fmt.Fprintf(w, "- %s\n", u)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "| pool | kubelet | nodes | kubelets read | NDF gate | digest | missing | stale | refusals | rejections | probe p50/p99 | control p50 |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, p := range g.Pools {
		fmt.Fprintf(w, "| %s | %s | %d | %d | %s | `%s` | %.0f%% | %d | %d | %d | %s/%s | %s |\n", p.Pool, strings.Join(p.Kubelets, ","), p.Nodes, p.KubeletsRead, p.KubeletGate,
			strings.Join(p.Digests, ","), p.MissingPct, len(p.StaleNodes), p.Refusals, p.Rejections, fmtSeconds(p.ProbeP50), fmtSeconds(p.ProbeP99), fmtSeconds(p.ControlP50))
	}
	return nil
}

// WriteJSON is the machine form.
func (g Gate) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(g)
}

// WriteYAML is the JSON form as YAML (the same fields and schema).
func (g Gate) WriteYAML(w io.Writer) error {
	doc, err := json.Marshal(g)
	if err != nil {
		return err
	}
	out, err := yaml.JSONToYAML(doc)
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// apiServerGates are the apiserver gates declarations depend on in a
// control plane of minor: the feature's own and each probe's field gate
// (an apiserver with one off drops or refuses what a pod asks for).
func apiServerGates(minor string) []string {
	gates := []string{fixtures.NodeDeclaredFeatures}
	for _, p := range fixtures.SchedulingProbes(minor) {
		gates = append(gates, p.APIServerGate)
	}
	for _, u := range fixtures.UpdateProbes(minor) {
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
