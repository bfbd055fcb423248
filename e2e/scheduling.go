//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
)

// SchedulingSpecInput is the input of SchedulingSpec.
type SchedulingSpecInput struct{ framework.SpecInput }

// SchedulingSpec proves control pods schedule on every pool, and pods that
// need a feature are bound where it is declared and refused elsewhere.
func SchedulingSpec(_ context.Context, inputGetter func() SchedulingSpecInput) {
	t := inputGetter().Topology
	cpMinor := framework.CPMinor(t)
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("SchedulingSpec"); e = in.Env })
	env := func() *framework.Env { return e }

	cells := claims.Matrix(t)
	for _, pool := range t.Pools() {
		ctl := claims.Find(cells, claims.Placement, pool.Name, claims.NoFeature)
		passCellIt(ctl, fmt.Sprintf("a pod that needs no feature is bound on %s", framework.PoolDesc(pool)), placementOrder, env,
			framework.ObservePlacement(pool, nil), func(ctx SpecContext, o framework.Observation) {
				res := *o.Placement
				framework.RecordPlacement(ctl, res)
				Expect(res.Unschedulable).To(BeFalse(), "control pod refused on %s: %s", pool.Name, res.Message)
				Expect(res.Node).NotTo(BeEmpty())
			})
	}

	for _, probe := range fixtures.FeaturePods(cpMinor) {
		for _, pool := range t.Pools() {
			cell := claims.Find(cells, claims.Placement, pool.Name, probe.Feature)
			declares := cell.Expect == claims.Bound
			claim := fmt.Sprintf("a pod that needs %s stays Pending, Unschedulable with the %s plugin message, on %s, which does not declare it", probe.Feature, cpMinor, framework.PoolDesc(pool))
			switch {
			case declares:
				claim = fmt.Sprintf("a pod that needs %s is bound on %s, which declares it", probe.Feature, framework.PoolDesc(pool))
			case !cell.Applies():
				claim = fmt.Sprintf("a pod that needs %s placed on %s", probe.Feature, framework.PoolDesc(pool))
			}
			passCellIt(cell, claim, placementOrderOf(cell), env, framework.ObservePlacement(pool, probe.Apply), func(ctx SpecContext, o framework.Observation) {
				e.ExpectPoolDeclares(ctx, pool, probe.Feature, declares)
				res := *o.Placement
				framework.RecordPlacement(cell, res)
				if declares {
					Expect(res.Unschedulable).To(BeFalse(), "pod needing %s refused on declaring pool %s: %s", probe.Feature, pool.Name, res.Message)
					Expect(res.Node).NotTo(BeEmpty())
					return
				}
				Expect(res.Node).To(BeEmpty(), "pod needing %s was bound to %s in pool %s, which does not declare it", probe.Feature, res.Node, pool.Name)
				Expect(res.Unschedulable).To(BeTrue())
				Expect(res.Message).To(ContainSubstring(fixtures.SchedulerRefusal(cpMinor, probe.Feature)), "refusal on %s", pool.Name)
			})
		}
	}
	pairs(t, cells, env)
}

// pairs: a pod that needs two features at once is bound only where the
// pool declares both; one of the two is not enough.
func pairs(t *topology.Topology, cells []claims.Cell, env func() *framework.Env) {
	cpMinor := framework.CPMinor(t)
	for _, pool := range t.Pools() {
		for _, cell := range claims.OfPool(cells, claims.Placement, pool.Name) {
			pair := claims.PairFeatures(cell)
			if pair == nil && cell.Feature != claims.NoPair {
				continue
			}
			claim := fmt.Sprintf("a pod that needs %s at once is refused on %s, which does not declare both", cell.Feature, framework.PoolDesc(pool))
			if cell.Expect == claims.Bound {
				claim = fmt.Sprintf("a pod that needs %s at once is bound on %s, which declares both", cell.Feature, framework.PoolDesc(pool))
			}
			var observe framework.ObserveFunc
			if cell.Applies() {
				first, second := framework.FeaturePod(t, pair[0]), framework.FeaturePod(t, pair[1])
				observe = framework.ObservePlacement(pool, func(p *corev1.Pod) { first.Apply(p); second.Apply(p) })
			}
			passCellIt(cell, claim, placementOrderOf(cell), env, observe, func(ctx SpecContext, o framework.Observation) {
				res := *o.Placement
				framework.RecordPlacement(cell, res)
				if cell.Expect == claims.Bound {
					Expect(res.Node).NotTo(BeEmpty(), "pod needing %s refused on %s: %s", cell.Feature, pool.Name, res.Message)
					return
				}
				Expect(res.Node).To(BeEmpty(), "pod needing %s was bound to %s in pool %s, which does not declare both", cell.Feature, res.Node, pool.Name)
				Expect(res.Unschedulable).To(BeTrue())
				Expect(res.Message).To(ContainSubstring(fixtures.SchedulerRefusal(cpMinor, "")), "refusal on %s", pool.Name)
				if strings.Contains(fixtures.SchedulerRefusal(cpMinor, "X"), "X") {
					for _, f := range pair { // 1.35 names each unsatisfied requirement, in no set order
						Expect(res.Message).To(ContainSubstring(f), "refusal on %s", pool.Name)
					}
				}
			})
		}
	}
}
