//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"

	. "github.com/onsi/ginkgo/v2"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
)

// KubeletDowngradeSpecInput is the input of KubeletDowngradeSpec.
type KubeletDowngradeSpecInput struct{ framework.SpecInput }

// KubeletDowngradeSpec swaps a publishing kubelet for the minor before it,
// in place, once per minor, all in one wave: what the older kubelet
// declares, and what it leaves stale.
func KubeletDowngradeSpec(_ context.Context, inputGetter func() KubeletDowngradeSpecInput) {
	t := inputGetter().Topology

	const claim = "downgrading a publishing kubelet in place to the minor before it"
	if why := claims.WhyNoRefusal(t); why != "" {
		BeforeEach(func() { inputGetter().Check("KubeletDowngradeSpec") })
		notApplicable(claim, why)
		return
	}
	// One downgrade per minor, on the pool whose declared set the downgrade
	// changes where there is one: then the claim fails if the older kubelet
	// does not overwrite the newer one's set.
	chosen, minors := map[string]topology.Pool{}, []string(nil)
	setChanges := func(p topology.Pool) bool {
		older, _ := framework.OlderVersion(t, p)
		return !slices.Equal(p.Intent().MustDeclare(), p.Intent().DowngradedTo(older).MustDeclare())
	}
	for _, pool := range t.Workers {
		if _, ok := framework.OlderVersion(t, pool); !ok || !pool.Intent().Publishes() {
			continue
		}
		minor := pool.Intent().Minor()
		if cur, seen := chosen[minor]; !seen {
			minors = append(minors, minor)
			chosen[minor] = pool
		} else if !setChanges(cur) && setChanges(pool) {
			chosen[minor] = pool
		}
	}
	if len(minors) == 0 {
		BeforeEach(func() { inputGetter().Check("KubeletDowngradeSpec") })
		notApplicable(claim, "no worker pool publishes declarations with an older minor's kubelet in this topology to go back to")
		return
	}
	var changes []kubeletChange
	for _, minor := range minors {
		pool := chosen[minor]
		older, _ := framework.OlderVersion(t, pool)
		after := pool.Intent().DowngradedTo(older)
		changes = append(changes, kubeletChange{pool: pool, after: after, older: older,
			trap: fixtures.UnknownGates(after.Minor(), pool.Kubelet.FeatureGates), cause: "downgrade to " + older})
	}
	kubeletWaveSpecs("KubeletDowngradeSpec", changes, func() framework.SpecInput { return inputGetter().SpecInput }, func(c kubeletChange) string {
		return fmt.Sprintf("downgrading the kubelet of %s in place to %s keeps the newer kubelet's declarations until they are cleared; then the node declares what the %s oracle says", framework.PoolDesc(c.pool), c.older, c.after.Minor())
	})
}
