//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/probes"
	"github.com/ndfq/ndfq/report"
)

func podName(parts ...string) string {
	s := strings.ToLower(strings.Join(parts, "-"))
	if len(s) > 60 {
		s = s[:60]
	}
	return strings.Trim(s, "-")
}

var _ = Describe("Scheduling by declared features", ndf, Label("scheduling"), func() {
	for _, pool := range poolsOf(suiteTopology) {
		pool := pool
		It(fmt.Sprintf("a pod that needs no feature is bound on %s", poolDesc(pool)), func(ctx SpecContext) {
			ns := specNamespace(ctx, "control")
			res, err := probes.Place(ctx, env.Clientset, ns, fixtures.BasePod("control", topology.PoolLabel, pool.Name))
			Expect(err).NotTo(HaveOccurred())
			recordPlacement(pool.Name, "(none)", "bound", res)
			Expect(res.Unschedulable).To(BeFalse(), "control pod refused on %s: %s", pool.Name, res.Message)
			Expect(res.Node).NotTo(BeEmpty())
		})
	}

	if !schedulerIntends() {
		return // without the plugin no refusal is claimed; the rollout suite covers that stage
	}
	for _, probe := range fixtures.SchedulingProbes(cpMinor) {
		probe := probe
		if !apiServerIntends(probe.APIServerGate) {
			continue // the apiserver would drop the field: no pod can need the feature
		}
		for _, pool := range poolsOf(suiteTopology) {
			pool := pool
			declares := slices.Contains(intendedSet(pool), probe.Feature)
			claim := fmt.Sprintf("a pod that needs %s stays Pending, Unschedulable with the %s plugin message, on %s, which does not declare it", probe.Feature, cpMinor, poolDesc(pool))
			if declares {
				claim = fmt.Sprintf("a pod that needs %s is bound on %s, which declares it", probe.Feature, poolDesc(pool))
			}
			It(claim, func(ctx SpecContext) {
				expectPoolDeclares(ctx, pool, probe.Feature, declares)
				ns := specNamespace(ctx, "sched")
				pod := fixtures.BasePod(podName("needs", pool.Name), topology.PoolLabel, pool.Name)
				probe.Apply(pod)
				res, err := probes.Place(ctx, env.Clientset, ns, pod)
				Expect(err).NotTo(HaveOccurred())
				recordPlacement(pool.Name, probe.Feature, map[bool]string{true: "bound", false: "refused"}[declares], res)
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
})

func recordPlacement(pool, feature, expected string, res probes.Placement) {
	seen := "refused"
	if res.Node != "" {
		seen = "bound"
	}
	record(report.Observation{Kind: report.KindPlacement, Pool: pool, Feature: feature, Node: res.Node, Expected: expected, Seen: seen, OK: seen == expected,
		Text: fmt.Sprintf("decided in %s", res.Decision.Round(time.Millisecond))})
}
