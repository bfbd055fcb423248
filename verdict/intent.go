package verdict

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/kubeversion"
	"github.com/ndfq/ndfq/probes"
)

// IntentPool is what an operator plans for one pool: how many nodes, and
// the kubelet (version, gates, runtime) each of them runs.
type IntentPool struct {
	Count   int
	Kubelet fixtures.Kubelet
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
		seen[d.Pool]++
		plan, ok := in.Pools[d.Pool]
		if !ok {
			add(d.Pool, d.Node, "pool %q is not in the intent (it plans %v)", d.Pool, slices.Sorted(maps.Keys(in.Pools)))
			continue
		}
		k := plan.Kubelet
		if want, err := kubeversion.Parse(k.Version); err == nil && d.KubeletVersion != want.String() {
			add(d.Pool, d.Node, "kubelet %s, the intent plans %s", d.KubeletVersion, want)
			continue // gates and declarations of another minor say nothing more
		}
		if d.Unreachable != "" {
			continue // kubelet-unreachable already holds: its gates cannot be read
		}
		planned := fixtures.EffectiveGates(k.Minor(), k.Gates)
		for _, gate := range gateDrift(d.Gates, planned) {
			add(d.Pool, d.Node, "gate %s: the intent plans %t, the kubelet reports %s", gate, planned[gate], d.Gates.Describe(gate))
		}
		must := k.MustDeclare()
		for _, f := range must {
			if !slices.Contains(d.Declared, f) {
				add(d.Pool, d.Node, "feature %s: the intent's kubelet declares it, the node does not (declares %v)", f, d.Declared)
			}
		}
		for _, f := range d.Declared {
			if !slices.Contains(must, f) {
				add(d.Pool, d.Node, "feature %s: the node declares it, the intent's kubelet does not (it declares %v)", f, must)
			}
		}
	}
	if e.run.NodeSelector == "" { // a selector's slice is not the whole plan
		for _, pool := range slices.Sorted(maps.Keys(in.Pools)) {
			if n := seen[pool]; n != in.Pools[pool].Count {
				add(pool, "", "%d node(s), the intent plans %d", n, in.Pools[pool].Count)
			}
		}
	}
	if in.ControlPlane != nil {
		in.ControlPlane.check(e)
	}
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
