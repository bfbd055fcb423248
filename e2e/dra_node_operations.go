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

// NodeOperationsSpecInput is the input of NodeOperationsSpec.
type NodeOperationsSpecInput struct{ framework.SpecInput }

// NodeOperationsSpec proves the scheduler's DynamicResources plugin reads
// declarations too (1.37+): a pod whose ResourceClaim can only get a
// device that skips the kubelet's node operations binds on a pool whose
// nodes declare DRAOptionalNodeOperations, where its kubelet runs it with
// no driver, and is refused in the plugin's words on every other (F27).
// Observed in the suite's pass, each cell with a DeviceClass and a
// ResourceSlice of its own.
func NodeOperationsSpec(_ context.Context, inputGetter func() NodeOperationsSpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("NodeOperationsSpec"); e = in.Env })
	env := func() *framework.Env { return e }

	cells := claims.Matrix(t)
	for _, pool := range t.Pools() {
		for _, cell := range claims.OfPool(cells, claims.NodeOperations, pool.Name) {
			text := fmt.Sprintf("a pod whose claim can only get a device that skips node operations is bound on %s, which declares %s, and runs there", framework.PoolDesc(pool), cell.Feature)
			if cell.Expect != claims.Bound {
				text = fmt.Sprintf("a pod whose claim can only get a device that skips node operations is refused on %s, which does not declare %s", framework.PoolDesc(pool), cell.Feature)
			}
			var observe framework.ObserveFunc
			if cell.Applies() {
				observe = framework.ObserveNodeOperations(pool)
			}
			passCellIt(cell, text, placementOrder, env, observe, func(ctx SpecContext, o framework.Observation) {
				By("the control: the same claim against a slice without the skip is bound on the pool")
				Expect(o.Control).NotTo(BeNil(), "no control placement: %s", o.Err)
				Expect(o.Control.Node).NotTo(BeEmpty(), "control pod %s was refused on %s: %s", o.Control.Pod, pool.Name, o.Control.Message)
				p := *o.Placement
				framework.RecordPlacement(cell, p)
				if cell.Expect == claims.Bound {
					Expect(p.Node).NotTo(BeEmpty(), "pod %s was refused on %s: %s", p.Pod, pool.Name, p.Message)
					By("its kubelet runs it with no DRA driver on the node: every node operation skipped")
					Expect(o.Kubelet.Seen).To(Equal(claims.Honoured), "pod %s on %s (evidence %s)", p.Pod, p.Node, o.Evidence)
					return
				}
				Expect(p.Node).To(BeEmpty(), "pod %s, whose device skips node operations, was bound to %s in pool %s, which does not declare %s", p.Pod, p.Node, pool.Name, cell.Feature)
				Expect(p.Unschedulable).To(BeTrue())
				Expect(p.Message).To(ContainSubstring(fixtures.NodeOperationsRefusal), "refusal on %s", pool.Name)
			})
		}
	}
}
