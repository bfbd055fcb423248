//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
)

// GateRollbackSpecInput is the input of GateRollbackSpec.
type GateRollbackSpecInput struct{ framework.SpecInput }

// GateRollbackSpec turns NodeDeclaredFeatures off on each publishing pool
// that may: the declarations stay (stale), the probe holds, and clearing
// them makes the node honest.
func GateRollbackSpec(_ context.Context, inputGetter func() GateRollbackSpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("GateRollbackSpec"); e = in.Env })

	const claim = "rolling back NodeDeclaredFeatures on a kubelet leaves its declarations in place until they are cleared"
	if why := whyNoRefusal(t); why != "" {
		notApplicable(claim, why)
		return
	}
	asked := false
	for _, pool := range t.Workers {
		intent := pool.Intent()
		if !intent.Publishes() || !intent.CanTurnOff(fixtures.NodeDeclaredFeatures) {
			continue
		}
		asked = true
		rolledBack := intent.Without(fixtures.NodeDeclaredFeatures)
		It(fmt.Sprintf("rolling back NodeDeclaredFeatures on %s (%s) leaves its declarations in place; the probe holds on declared-but-not-enabled; clearing status.declaredFeatures makes the node honest and feature pods are refused there", framework.PoolDesc(pool), surgery.FormatGatesOrNone(rolledBack.Gates)), func(ctx SpecContext) {
			name, node := e.PoolNode(ctx, pool)
			before := framework.SortedCopy(e.DeclaredOf(ctx, name))
			Expect(before).NotTo(BeEmpty(), "precondition")
			ns := e.Namespace(ctx, "rollback")
			DeferCleanup(e.RestoreKubelet, pool, name, node, false, NodeTimeout(6*time.Minute))
			By("the safe order with " + surgery.FormatGatesOrNone(rolledBack.Gates))
			_, err := surgery.DropKubeletFeatures(ctx, e.DropInput(pool, name, node, rolledBack))
			Expect(err).NotTo(HaveOccurred())
			Expect(surgery.Cordon(ctx, e.Clientset, name, false)).To(Succeed())
			e.WaitKubelet(ctx, name, "", rolledBack.Gates)
			e.ExpectStaleUntilCleared(ctx, ns, pool, name, before, "gate rollback "+surgery.FormatGatesOrNone(rolledBack.Gates))
		}, SpecTimeout(10*time.Minute))
	}
	if !asked {
		notApplicable(claim, "no worker pool publishes declarations with a NodeDeclaredFeatures gate that may be turned off (it is locked on from 1.37)")
	}
}
