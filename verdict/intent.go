package verdict

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/kubeversion"
	"github.com/ndfq/ndfq/probes"
)

// IntentPool is what an operator plans for one pool: which nodes are in
// it, how many, and the kubelets (version, gates, runtime) they run.
type IntentPool struct {
	// Selector picks the pool's nodes by their labels; nil takes the
	// run's pool of the same name (its pool label's value).
	Selector labels.Selector
	// Min and Max bound the node count; Max 0 is no upper bound. A
	// topology plans an exact count (Min == Max).
	Min, Max int
	// Kubelets are the kubelets planned there, one per version (two
	// during a rollout). A version without a patch ("1.37") is any
	// release of that minor.
	Kubelets []fixtures.Kubelet
	// RuntimeUnplanned: the plan names no runtime, so features that hang
	// on what the runtime reports are not held to it.
	RuntimeUnplanned bool
}

// kubeletFor is the planned kubelet a node's kubelet version is.
func (p IntentPool) kubeletFor(version string) (fixtures.Kubelet, bool) {
	for _, k := range p.Kubelets {
		if want, err := kubeversion.Parse(k.Version); err == nil {
			if want.String() == version {
				return k, true
			}
		} else if k.Minor() == kubeversion.MinorOf(version) {
			return k, true
		}
	}
	return fixtures.Kubelet{}, false
}

// versions names the planned kubelet versions.
func (p IntentPool) versions() string {
	var out []string
	for _, k := range p.Kubelets {
		if v, err := kubeversion.Parse(k.Version); err == nil {
			out = append(out, v.String())
		} else {
			out = append(out, k.Version+".x")
		}
	}
	return strings.Join(out, " or ")
}

// counts says the planned count: "3", "at least 300", "300 to 400".
func (p IntentPool) counts() string {
	switch p.Max {
	case p.Min:
		return strconv.Itoa(p.Min)
	case 0:
		return fmt.Sprintf("at least %d", p.Min)
	}
	return fmt.Sprintf("%d to %d", p.Min, p.Max)
}

// IntentControlPlane is what an operator plans for the control plane.
type IntentControlPlane struct {
	Version         string             // every apiserver's
	APIServer       fixtures.Component // gates (and emulated version) of every apiserver
	Scheduler       fixtures.Component
	ExtraSchedulers []IntentScheduler // schedulers besides the default one
}

// IntentScheduler is an extra scheduler the plan names, and whether its
// profile runs the NodeDeclaredFeatures plugin.
type IntentScheduler struct {
	Name                string
	IgnoresDeclarations bool // planned without the plugin
}

// Intent is the fleet's plan (a topology file is one).
type Intent struct {
	Pools        map[string]IntentPool
	ControlPlane *IntentControlPlane // nil: the control plane is not held to a plan
}

// check holds the run to the plan: each reachable node's pool, node
// count, kubelet version, reported gates and declared set against what the
// oracle says its pool's planned kubelet runs and declares; then every
// apiserver's version and gates, the scheduler's gates and the extra
// schedulers. A kubelet that drifted from the plan but declares
// consistently with its own gates is caught here, not by
// declared-but-not-enabled.
func (in *Intent) check(e *evaluation) {
	add := func(pool, node, format string, args ...any) { e.hold(IntentMismatch, pool, node, format, args...) }
	seen := map[string]int{}
	for _, d := range e.run.Declarations {
		name, ok := in.poolOf(d)
		if !ok {
			add(d.Pool, d.Node, "%s", name)
			continue
		}
		seen[name]++
		plan := in.Pools[name]
		k, ok := plan.kubeletFor(d.KubeletVersion)
		if !ok {
			add(d.Pool, d.Node, "kubelet %s, the intent plans %s for pool %s", d.KubeletVersion, plan.versions(), name)
			continue // gates and declarations of another version say nothing more
		}
		if d.Unreachable != "" {
			continue // kubelet-unreachable already holds: its gates cannot be read
		}
		planned := fixtures.EffectiveGates(k.Minor(), k.Gates)
		for _, gate := range gateDrift(d.Gates, planned) {
			add(d.Pool, d.Node, "gate %s: the intent plans %t, the kubelet reports %s", gate, planned[gate], d.Gates.Describe(gate))
		}
		must := k.MustDeclare()
		var unplanned []string // hang on a runtime the plan does not name
		if plan.RuntimeUnplanned {
			unplanned = fixtures.RuntimeDependent(k.Minor(), planned)
		}
		for _, f := range must {
			if !slices.Contains(d.Declared, f) && !slices.Contains(unplanned, f) {
				add(d.Pool, d.Node, "feature %s: the intent's kubelet declares it, the node does not (declares %v)", f, d.Declared)
			}
		}
		for _, f := range d.Declared {
			if !slices.Contains(must, f) && !slices.Contains(unplanned, f) {
				add(d.Pool, d.Node, "feature %s: the node declares it, the intent's kubelet does not (it declares %v)", f, must)
			}
		}
	}
	if e.run.NodeSelector == "" { // a selector's slice is not the whole plan
		for _, pool := range slices.Sorted(maps.Keys(in.Pools)) {
			plan := in.Pools[pool]
			if n := seen[pool]; n < plan.Min || (plan.Max > 0 && n > plan.Max) {
				add(pool, "", "%d node(s), the intent plans %s", n, plan.counts())
			}
		}
	}
	if in.ControlPlane != nil {
		in.ControlPlane.check(e)
	}
}

// poolOf is the intent pool a node belongs to: the one whose selector
// matches its labels, or (a plan without selectors) the run's pool of
// the same name. Not ok: why none or more than one.
func (in *Intent) poolOf(d probes.Declaration) (string, bool) {
	var match []string
	for name, p := range in.Pools {
		if (p.Selector == nil && d.Pool == name) || (p.Selector != nil && p.Selector.Matches(labels.Set(d.Labels))) {
			match = append(match, name)
		}
	}
	slices.Sort(match)
	switch len(match) {
	case 1:
		return match[0], true
	case 0:
		return fmt.Sprintf("the node is in no pool of the intent (it plans %v)", slices.Sorted(maps.Keys(in.Pools))), false
	}
	return fmt.Sprintf("the node is in pools %v of the intent: their selectors overlap", match), false
}

// check holds every apiserver's version and gates, the scheduler's gates
// and the extra schedulers to the plan.
func (cp *IntentControlPlane) check(e *evaluation) {
	add := func(format string, args ...any) { e.hold(IntentMismatch, ControlPlane, "", format, args...) }
	want, err := kubeversion.Parse(cp.Version)
	if err != nil {
		return // a plan is validated when loaded
	}
	versions := map[string]string{"the cluster's address": e.run.ServerVersion}
	gates := map[string]probes.Gates{"the cluster's address": e.run.APIServer}
	for ep := range e.run.APIServerVersions {
		versions[ep], gates[ep] = e.run.APIServerVersions[ep], e.run.APIServers[ep]
	}
	apiPlan := fixtures.EffectiveGates(cp.APIServer.GateMinor(), cp.APIServer.Gates)
	for _, at := range slices.Sorted(maps.Keys(versions)) {
		if versions[at] != want.String() {
			add("kube-apiserver at %s is %s, the intent plans %s", at, versions[at], want)
		}
		for _, gate := range gateDrift(gates[at], apiPlan) {
			add("kube-apiserver at %s: gate %s: the intent plans %t, it reports %s", at, gate, apiPlan[gate], gates[at].Describe(gate))
		}
	}
	if e.run.Scheduler == nil {
		why := cmp.Or(e.run.SchedulerUnchecked, "no --scheduler-metrics-url")
		e.unchecked(ItemIntent, ControlPlane, nil, "kube-scheduler's gates were not read (%s): they are not held to the plan", why)
	} else {
		schedPlan := fixtures.EffectiveGates(cp.Scheduler.GateMinor(), cp.Scheduler.Gates)
		for _, gate := range gateDrift(e.run.Scheduler, schedPlan) {
			add("kube-scheduler: gate %s: the intent plans %t, it reports %s", gate, schedPlan[gate], e.run.Scheduler.Describe(gate))
		}
	}
	for _, s := range cp.ExtraSchedulers {
		switch {
		case slices.Contains(e.run.Schedulers, s.Name):
			checkPlannedScheduler(e, s)
		case s.IgnoresDeclarations:
			e.v.NotApplicable = append(e.v.NotApplicable, Unchecked{Check: ItemIntent, Pool: ControlPlane,
				Reason: fmt.Sprintf("the intent plans scheduler %q without the NodeDeclaredFeatures plugin (ignoresDeclarations): placement through it is not held to declarations; probe it with --scheduler-name %s to see it bypass them", s.Name, s.Name)})
		default:
			e.unchecked(ItemIntent, ControlPlane, nil, "the intent plans scheduler %q with the NodeDeclaredFeatures plugin, which this run did not probe (pass --scheduler-name %s)", s.Name, s.Name)
		}
	}
}

// ExtraSchedulers are the schedulers besides the default one the plan names.
func (in *Intent) ExtraSchedulers() []IntentScheduler {
	if in == nil || in.ControlPlane == nil {
		return nil
	}
	return in.ControlPlane.ExtraSchedulers
}

// plansWithoutPlugin is whether the plan names scheduler as one without
// the NodeDeclaredFeatures plugin (nil plans nothing).
func (in *Intent) plansWithoutPlugin(scheduler string) bool {
	return in != nil && in.ControlPlane != nil && slices.ContainsFunc(in.ControlPlane.ExtraSchedulers, func(s IntentScheduler) bool {
		return s.Name == scheduler && s.IgnoresDeclarations
	})
}

// checkPlannedScheduler holds a probed extra scheduler's behaviour to the
// plan: the plugin's refusal where it lacks the plugin, a binding to a
// node lacking the feature where it has it.
func checkPlannedScheduler(e *evaluation, s IntentScheduler) {
	for _, p := range e.run.Placements {
		if p.Scheduler != s.Name || p.Declares {
			continue
		}
		switch {
		case s.IgnoresDeclarations && !p.Bound && e.pluginWords(p):
			e.hold(IntentMismatch, ControlPlane, "", "scheduler %s refused a pod needing %s in the plugin's words: the intent plans it without the NodeDeclaredFeatures plugin", s.Name, p.Feature)
			return
		case !s.IgnoresDeclarations && p.Bound:
			e.hold(IntentMismatch, ControlPlane, "", "scheduler %s bound a pod needing %s to %s, which does not declare it: the intent plans it with the NodeDeclaredFeatures plugin", s.Name, p.Feature, p.Node)
			return
		}
	}
}

// gateDrift are the planned gates a component knows and has otherwise, sorted.
func gateDrift(got probes.Gates, planned map[string]bool) []string {
	var out []string
	for _, gate := range slices.Sorted(maps.Keys(planned)) {
		if got.Known(gate) && got.Enabled(gate) != planned[gate] {
			out = append(out, gate)
		}
	}
	return out
}
