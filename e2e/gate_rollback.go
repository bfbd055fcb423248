//go:build e2e

package e2e

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
)

// GateRollbackSpecInput is the input of GateRollbackSpec.
type GateRollbackSpecInput struct{ framework.SpecInput }

// GateRollbackSpec turns NodeDeclaredFeatures off on every publishing pool
// that may, in one wave: the declarations stay (stale), the probe holds,
// and clearing them makes the node honest.
func GateRollbackSpec(_ context.Context, inputGetter func() GateRollbackSpecInput) {
	t := inputGetter().Topology
	const claim = "rolling back NodeDeclaredFeatures on a kubelet leaves its declarations in place until they are cleared"
	if why := claims.WhyNoRefusal(t); why != "" {
		BeforeEach(func() { inputGetter().Check("GateRollbackSpec") })
		notApplicable(claim, why)
		return
	}
	var changes []kubeletChange
	for _, pool := range t.Workers {
		intent := pool.Intent()
		if intent.Publishes() && intent.CanTurnOff(fixtures.NodeDeclaredFeatures) {
			after := intent.Without(fixtures.NodeDeclaredFeatures)
			changes = append(changes, kubeletChange{pool: pool, after: after, cause: "gate rollback " + surgery.FormatGatesOrNone(after.Gates)})
		}
	}
	if len(changes) == 0 {
		BeforeEach(func() { inputGetter().Check("GateRollbackSpec") })
		notApplicable(claim, "no worker pool publishes declarations with a NodeDeclaredFeatures gate that may be turned off (it is locked on from 1.37)")
		return
	}
	kubeletWaveSpecs("GateRollbackSpec", changes, func() framework.SpecInput { return inputGetter().SpecInput }, func(c kubeletChange) string {
		return fmt.Sprintf("rolling back NodeDeclaredFeatures on %s (%s) leaves its declarations in place; the probe holds on declared-but-not-enabled; clearing status.declaredFeatures makes the node honest and feature pods are refused there", framework.PoolDesc(c.pool), surgery.FormatGatesOrNone(c.after.Gates))
	})
}
