//go:build e2e

package e2e

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
)

// PreemptionSpecInput is the input of PreemptionSpec.
type PreemptionSpecInput struct{ framework.SpecInput }

// PreemptionSpec proves only nodes that declare a feature are preemption
// candidates for a pod that needs it: with every node of a pool held by a
// default-priority pod on a host port, a higher-priority pod that needs
// the feature and the port preempts one where the pool declares it, and
// where it does not, is refused with no victim and no nominated node.
// Observed in the suite's pass, each pool on a host port of its own.
func PreemptionSpec(_ context.Context, inputGetter func() PreemptionSpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("PreemptionSpec"); e = in.Env })
	env := func() *framework.Env { return e }

	cells := claims.Matrix(t)
	for i, pool := range t.Pools() {
		for _, cell := range claims.OfPool(cells, claims.Preemption, pool.Name) {
			text := fmt.Sprintf("a high-priority pod that needs %s preempts a low-priority pod on %s, which declares it", cell.Feature, framework.PoolDesc(pool))
			if cell.Expect != fixtures.Preempted {
				text = fmt.Sprintf("a high-priority pod that needs %s evicts no pod on %s, which does not declare it: the node is no preemption candidate", cell.Feature, framework.PoolDesc(pool))
			}
			var observe framework.ObserveFunc
			if cell.Applies() {
				observe = framework.ObservePreemption(pool, framework.FeaturePod(t, cell.Feature), preemptionPort+int32(i))
			}
			passCellIt(cell, text, updateOrder, env, observe, func(ctx SpecContext, o framework.Observation) {
				p := *o.Preemption
				framework.RecordCell(cell, p.Node, p.Seen, fmt.Sprintf("victims %v, nominated %q, bound to %q", p.Victims, p.Nominated, p.Node))
				if cell.Expect == fixtures.Preempted {
					Expect(p.Victims).To(HaveLen(1), "pod %s preempted %v (%s)", p.Pod, p.Victims, p.Message)
					Expect(p.Node).NotTo(BeEmpty(), "pod %s preempted %v but was not bound (nominated %q)", p.Pod, p.Victims, p.Nominated)
					return
				}
				Expect(p.Victims).To(BeEmpty(), "pod %s, which needs %s, preempted %v on %s", p.Pod, cell.Feature, p.Victims, pool.Name)
				Expect(p.Node).To(BeEmpty(), "pod %s bound to %s", p.Pod, p.Node)
				Expect(p.Message).To(ContainSubstring(fixtures.SchedulerRefusal(framework.CPMinor(t), cell.Feature)))
			})
		}
	}
}

// preemptionPort is the first host port the preemption cells hold, one
// per pool after it: none of the cluster's own pods uses these.
const preemptionPort int32 = 18100
