package framework

import (
	"fmt"
	"strings"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/kubeversion"
)

// Specs choose pools by what the oracle says of them, never by position.

// PoolWhere is the first pool (control plane first, then workers in file
// order) that has the property; ok is false where none has.
func PoolWhere(pools []topology.Pool, has func(topology.Pool) bool) (topology.Pool, bool) {
	for _, p := range pools {
		if has(p) {
			return p, true
		}
	}
	return topology.Pool{}, false
}

// PoolsPerMinor is, for each kubelet minor, the first pool of that minor
// that has the property: "every kind of kubelet" for claims that differ by
// minor (pools in PoolWhere's order).
func PoolsPerMinor(pools []topology.Pool, has func(topology.Pool) bool) []topology.Pool {
	var out []topology.Pool
	seen := map[string]bool{}
	for _, p := range pools {
		if m := p.PoolVersion().Minor(); has(p) && !seen[m] {
			seen[m] = true
			out = append(out, p)
		}
	}
	return out
}

// Any is the property every pool has, for claims that hold on any node.
func Any(topology.Pool) bool { return true }

// ControlPlane is the property "it is the control-plane node's pool".
func ControlPlane(p topology.Pool) bool { return p.Name == topology.ControlPlanePool }

// Declares is the property "its kubelets must declare feature".
func Declares(feature string) func(topology.Pool) bool {
	return func(p topology.Pool) bool { return p.Intent().Declares(feature) }
}

// Lacks is the property "its kubelets must not declare feature".
func Lacks(feature string) func(topology.Pool) bool {
	return func(p topology.Pool) bool { return !p.Intent().Declares(feature) }
}

// Publishes is the property "its kubelets send status.declaredFeatures".
func Publishes(p topology.Pool) bool { return p.Intent().Publishes() }

// Silent is the property "its kubelets publish nothing".
func Silent(p topology.Pool) bool { return !p.Intent().Publishes() }

// DeclaresAnything is the property "its kubelets declare at least one feature".
func DeclaresAnything(p topology.Pool) bool { return len(p.Intent().MustDeclare()) > 0 }

// OldestPool is the pool with the oldest kubelet (the first such in file order).
func OldestPool(pools []topology.Pool) topology.Pool {
	oldest := pools[0]
	for _, p := range pools[1:] {
		if kubeversion.Compare(p.PoolVersion(), oldest.PoolVersion()) < 0 {
			oldest = p
		}
	}
	return oldest
}

// OlderVersion is a version of the topology one minor older than pool's
// (every node image carries the kubelets of the topology's versions).
func OlderVersion(t *topology.Topology, p topology.Pool) (string, bool) {
	want := kubeversion.PreviousMinor(p.PoolVersion().Minor())
	for _, v := range t.Versions() {
		if v.Minor() == want {
			return v.String(), true
		}
	}
	return "", false
}

// PoolDesc names a pool in a claim: "pool n-1 (v1.36.3)".
func PoolDesc(p topology.Pool) string { return fmt.Sprintf("pool %s (%s)", p.Name, p.PoolVersion()) }

// DescribeSet renders a declared set in a claim.
func DescribeSet(s []string) string {
	if len(s) == 0 {
		return "nothing"
	}
	return "[" + strings.Join(s, " ") + "]"
}

// CPMinor is the control plane's minor: it decides what the scheduler and
// the admission plugin infer.
func CPMinor(t *topology.Topology) string { return t.ControlPlaneVersion().Minor() }

// FeaturePod is the probe that needs feature on t's control plane;
// specs are only generated where the oracle has one.
func FeaturePod(t *topology.Topology, feature string) fixtures.FeaturePod {
	p, ok := fixtures.FeaturePodFor(CPMinor(t), feature)
	if !ok {
		panic(fmt.Sprintf("fixtures has no scheduling probe for %s on a %s control plane", feature, CPMinor(t)))
	}
	return p
}
