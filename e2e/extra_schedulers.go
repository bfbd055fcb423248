//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/report"
	"github.com/ndfq/ndfq/verdict"
)

// ExtraSchedulersSpecInput is the input of ExtraSchedulersSpec.
type ExtraSchedulersSpecInput struct{ framework.SpecInput }

// ExtraSchedulersSpec proves what the topology's extra schedulers
// (controlPlane.extraSchedulers) do with a pod that needs a feature its
// pool does not declare: one without the NodeDeclaredFeatures plugin
// binds it while the default scheduler refuses it; one with the plugin
// refuses it too; and `ndfq probe --scheduler-name` holds on the first.
func ExtraSchedulersSpec(_ context.Context, inputGetter func() ExtraSchedulersSpecInput) {
	t := inputGetter().Topology
	cpMinor := framework.CPMinor(t)
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("ExtraSchedulersSpec"); e = in.Env })

	extra := t.ControlPlane.ExtraSchedulers
	if len(extra) == 0 {
		notApplicable("an extra scheduler binds, or refuses, a pod that needs a feature its pool does not declare", "the topology has no controlPlane.extraSchedulers")
		return
	}
	refusing, whyNot := refusedPools(claims.Matrix(t), restartAll)
	lacking, ok := framework.PoolWhere(t.Pools(), func(p topology.Pool) bool { return slices.Contains(refusing, p.Name) })
	if !ok {
		notApplicable("an extra scheduler binds, or refuses, a pod that needs "+restartAll+" where the default scheduler refuses it", whyNot)
		return
	}
	needs := framework.FeaturePod(t, restartAll).Apply

	for _, s := range extra {
		claim := fmt.Sprintf("extra scheduler %s (NodeDeclaredFeatures plugin on) refuses a pod that needs %s on %s, as the default scheduler does", s.Name, restartAll, framework.PoolDesc(lacking))
		if s.IgnoresDeclarations {
			claim = fmt.Sprintf("extra scheduler %s (plugin disabled) binds a pod that needs %s to %s, which does not declare it, where the default scheduler refuses it", s.Name, restartAll, framework.PoolDesc(lacking))
		}
		It(claim, func(ctx SpecContext) {
			e.ExpectPoolDeclares(ctx, lacking, restartAll, false)
			ns := e.Namespace(ctx, "extra-sched")
			By("a pod that needs nothing: the extra scheduler runs and places on " + lacking.Name)
			ctl := framework.PoolPod("control", lacking, nil)
			ctl.Spec.SchedulerName = s.Name
			res := e.Place(ctx, ns, ctl)
			Expect(res.Node).NotTo(BeEmpty(), "scheduler %s did not bind a control pod: %s", s.Name, res.Message)

			By("the default scheduler refuses the pod that needs " + restartAll)
			def := e.Place(ctx, ns, framework.PoolPod("default", lacking, needs))
			Expect(def.Node).To(BeEmpty(), "the default scheduler bound a pod needing %s to %s", restartAll, def.Node)
			Expect(def.Message).To(ContainSubstring(fixtures.SchedulerRefusal(cpMinor, restartAll)))

			By("scheduler " + s.Name + " places the same pod")
			pod := framework.PoolPod("extra", lacking, needs)
			pod.Spec.SchedulerName = s.Name
			res = e.Place(ctx, ns, pod)
			if s.IgnoresDeclarations {
				Expect(res.Node).NotTo(BeEmpty(), "scheduler %s without the plugin refused: %s", s.Name, res.Message)
				Expect(e.DeclaredOf(ctx, res.Node)).NotTo(ContainElement(restartAll), "bound to a node that does not declare it")
			} else {
				Expect(res.Node).To(BeEmpty(), "scheduler %s with the plugin bound a pod needing %s to %s, which does not declare it", s.Name, restartAll, res.Node)
				Expect(res.Unschedulable).To(BeTrue())
				Expect(res.Message).To(ContainSubstring(fixtures.SchedulerRefusal(cpMinor, restartAll)))

				By("its refusal shows in its own " + fixtures.SignalSchedulerRefusals.Name + " (its profile, scraped from it)")
				prom, err := e.PrometheusUp(ctx)
				Expect(err).NotTo(HaveOccurred(), "the suite's Prometheus")
				sig := fixtures.SignalSchedulerRefusals
				query := fmt.Sprintf(`sum(%s{%s,job=%q,scheduler=%q,profile=%q})`, sig.Name, sig.Selector, framework.ExtraSchedulerJob, s.Name, s.Name)
				got, err := prom.WaitAtLeast(ctx, query, 1)
				Expect(err).NotTo(HaveOccurred(), "[query %s] scheduler %s refused pod %s in the plugin's words, but its own series says %g", query, s.Name, res.Pod, got)
			}
			framework.Record(report.Observation{Kind: report.KindMeasure, Pool: lacking.Name, Feature: restartAll,
				Text: fmt.Sprintf("extra scheduler %s (ignoresDeclarations %t): bound to %q; the default scheduler refused", s.Name, s.IgnoresDeclarations, res.Node)})
		})
	}

	// Beside the parallel specs: decision times are the control plane's
	// own stamps, not how fast a busy client saw them.
	It(fmt.Sprintf("ndfq probe --scheduler-name holds scheduler-ignores-declarations naming exactly the extra schedulers without the plugin, of %v, probing %s", t.ExtraSchedulerNames(), framework.PoolDesc(lacking)), func(ctx SpecContext) {
		var args, ignoring []string
		for _, s := range extra {
			args = append(args, "--scheduler-name", s.Name)
			if s.IgnoresDeclarations {
				ignoring = append(ignoring, s.Name)
			}
		}
		code, g := e.ProbeVerdictOn(ctx, []string{lacking.Name}, args...)
		if len(ignoring) == 0 {
			Expect(code).To(Equal(0), "every extra scheduler keeps the plugin: %s %v", g.Outcome, g.Reasons)
			return
		}
		Expect(code).To(Equal(1), "%s %v", g.Outcome, g.Reasons)
		Expect(g.Fired()).To(Equal([]verdict.Condition{verdict.SchedulerIgnoresDecl}), "%v", g.Reasons)
		Expect(g.Holds(verdict.SchedulerIgnoresDecl, lacking.Name, "")).To(BeTrue(), "pool %s: %v", lacking.Name, g.Reasons)
		named := map[string]bool{}
		for _, r := range g.Reasons {
			for _, s := range extra {
				// The probe's words: "scheduler NAME bound a pod needing ...".
				named[s.Name] = named[s.Name] || strings.HasPrefix(r.Detail, "scheduler "+s.Name+" bound ")
			}
		}
		for _, s := range extra {
			Expect(named[s.Name]).To(Equal(s.IgnoresDeclarations), "scheduler %s (ignoresDeclarations %t) named in a reason: %v", s.Name, s.IgnoresDeclarations, g.Reasons)
		}
		framework.Record(report.Observation{Kind: report.KindMeasure, Feature: restartAll, Text: fmt.Sprintf("ndfq probe held scheduler-ignores-declarations naming %v", ignoring)})
	})
}
