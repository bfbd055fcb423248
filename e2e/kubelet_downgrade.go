//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/wait"
	"github.com/ndfq/ndfq/probes"
	"github.com/ndfq/ndfq/report"
)

// KubeletDowngradeSpecInput is the input of KubeletDowngradeSpec.
type KubeletDowngradeSpecInput struct{ framework.SpecInput }

// KubeletDowngradeSpec swaps a publishing kubelet for the minor before it,
// in place, once per minor: what the older kubelet declares, and what it
// leaves stale.
func KubeletDowngradeSpec(_ context.Context, inputGetter func() KubeletDowngradeSpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("KubeletDowngradeSpec"); e = in.Env })

	const claim = "downgrading a publishing kubelet in place to the minor before it"
	if why := whyNoRefusal(t); why != "" {
		notApplicable(claim, why)
		return
	}
	// One downgrade per minor, on the pool whose declared set the downgrade
	// changes where there is one: then the claim fails if the older kubelet
	// does not overwrite the newer one's set.
	chosen, minors := map[string]topology.Pool{}, []string(nil)
	changes := func(p topology.Pool) bool {
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
		} else if !changes(cur) && changes(pool) {
			chosen[minor] = pool
		}
	}
	if len(minors) == 0 {
		notApplicable(claim, "no worker pool publishes declarations with an older minor's kubelet in this topology to go back to")
	}
	for _, minor := range minors {
		pool := chosen[minor]
		older, _ := framework.OlderVersion(t, pool)
		after := pool.Intent().DowngradedTo(older)
		It(fmt.Sprintf("downgrading the kubelet of %s in place to %s keeps the newer kubelet's declarations until they are cleared; then the node declares what the %s oracle says", framework.PoolDesc(pool), older, after.Minor()), func(ctx SpecContext) {
			name, node := e.PoolNode(ctx, pool)
			before := framework.SortedCopy(e.DeclaredOf(ctx, name))
			ns := e.Namespace(ctx, "downgrade")
			DeferCleanup(e.RestoreKubelet, pool, name, node, true, NodeTimeout(6*time.Minute))
			if unknown := fixtures.UnknownGates(after.Minor(), pool.Kubelet.FeatureGates); len(unknown) > 0 {
				By("the trap first: the " + older + " kubelet refuses gates it does not know")
				_, err := surgery.WriteKubeletGates(node, pool.Kubelet.FeatureGates)
				Expect(err).NotTo(HaveOccurred())
				Expect(surgery.SwapKubelet(node, older)).To(Succeed())
				Expect(wait.Until(ctx, wait.KubeletSync, "the "+older+" kubelet to refuse "+strings.Join(unknown, ","), func(context.Context) (bool, string, error) {
					return strings.Contains(surgery.KubeletLog(node, 200), "unrecognized feature gate"), "no refusal in the journal yet", nil
				})).To(Succeed())
				framework.Record(report.Observation{Kind: report.KindFinding, Pool: pool.Name, Node: name, OK: true,
					Text: fmt.Sprintf("kubelet %s does not start with %s: unrecognized feature gate; a downgrade must drop them", older, strings.Join(unknown, ","))})
			}
			By("the safe order, then the " + older + " kubelet with " + surgery.FormatGatesOrNone(after.Gates))
			_, err := surgery.DropKubeletFeatures(ctx, e.DropInput(pool, name, node, after))
			Expect(err).NotTo(HaveOccurred())
			Expect(surgery.SwapKubelet(node, older)).To(Succeed())
			Expect(surgery.Cordon(ctx, e.Clientset, name, false)).To(Succeed())
			e.WaitKubelet(ctx, name, older, after.Gates)
			if want := after.MustDeclare(); want != nil {
				// A publishing older kubelet overwrites the set with its own:
				// what only the newer minor declared goes, the rest stays.
				e.WaitLeaseRenewals(ctx, name, 2)
				e.WaitDeclared(ctx, name, want)
				framework.Record(report.Observation{Kind: report.KindMeasure, Pool: pool.Name, Node: name, OK: true,
					Text: fmt.Sprintf("downgrade to %s: declared %s, then %s (dropped %s)", older, framework.DescribeSet(before), framework.DescribeSet(want), framework.DescribeSet(probes.Without(before, want)))})
				return
			}
			e.ExpectStaleUntilCleared(ctx, ns, pool, name, before, "downgrade to "+older)
		}, SpecTimeout(10*time.Minute))
	}
}
