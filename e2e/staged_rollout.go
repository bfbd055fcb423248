//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/report"
	"github.com/ndfq/ndfq/verdict"
)

// StagedRolloutSpecInput is the input of StagedRolloutSpec.
type StagedRolloutSpecInput struct{ framework.SpecInput }

// StagedRolloutSpec turns NodeDeclaredFeatures on in a fleet where it is
// off everywhere, stage by stage in the supported order, shows the wrong
// orders held, and rolls the control plane back. Its specs are Ordered:
// each stage starts where the one before left the cluster.
func StagedRolloutSpec(_ context.Context, inputGetter func() StagedRolloutSpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeAll(func() { in := inputGetter(); in.Check("StagedRolloutSpec"); e = in.Env })

	// The rollout starts where the feature is off everywhere and may be turned on.
	const claim = "turning NodeDeclaredFeatures on stage by stage in the supported order, and rolling the control plane back"
	switch {
	case fixtures.GateLocked(framework.CPMinor(t), fixtures.NodeDeclaredFeatures):
		notApplicable(claim, "the control plane's minor "+framework.CPMinor(t)+" has NodeDeclaredFeatures locked on: there is nothing to roll out")
		return
	case t.APIServer().Enables(fixtures.NodeDeclaredFeatures) || t.Scheduler().Enables(fixtures.NodeDeclaredFeatures):
		notApplicable(claim, "the control plane already runs NodeDeclaredFeatures in this topology: the rollout starts where it is off everywhere")
		return
	}
	var canary topology.Pool
	var rest, legacy []topology.Pool
	for _, p := range t.Workers {
		switch {
		case p.Intent().Publishes():
			notApplicable(claim, "pool "+p.Name+" already publishes declarations in this topology: the rollout starts where they are off everywhere")
			return
		case !p.Intent().CanTurnOff(fixtures.NodeDeclaredFeatures):
			legacy = append(legacy, p) // the minor has no gate to turn on
		case canary.Name == "":
			canary = p
		default:
			rest = append(rest, p)
		}
	}
	if canary.Name == "" {
		notApplicable(claim, "no worker pool has a NodeDeclaredFeatures gate to turn on")
		return
	}
	// What each stage turns on, from the oracle: the feature and its gate.
	apiOn := framework.WithGates(t.APIServer(), map[string]bool{fixtures.NodeDeclaredFeatures: true, restartAll: true})
	schedOn := framework.WithGates(t.Scheduler(), map[string]bool{fixtures.NodeDeclaredFeatures: true})
	kubeletOn := func(p topology.Pool) fixtures.Kubelet {
		g := maps.Clone(p.Kubelet.FeatureGates)
		if g == nil {
			g = map[string]bool{}
		}
		g[fixtures.NodeDeclaredFeatures], g[restartAll] = true, true
		return p.Intent().With(g)
	}

	AfterAll(func(ctx SpecContext) {
		By("back to the topology, in the reverse of the rollout order; the kubelets publish nothing then, so their old sets are cleared")
		for _, p := range append([]topology.Pool{canary}, rest...) {
			e.SetPoolKubelets(ctx, p, p.Intent(), true)
		}
		e.SetComponent(ctx, framework.KubeScheduler, t.Scheduler())
		e.SetComponent(ctx, framework.KubeAPIServer, t.APIServer())
		g := e.StageProbe(ctx, "restored")
		Expect(g.Outcome).To(Equal(verdict.GO), "restored cluster: %v", g.Reasons)
	}, NodeTimeout(12*time.Minute))

	It("stage 0, NodeDeclaredFeatures off everywhere: GO, and every pool takes control pods", func(ctx SpecContext) {
		g := e.StageProbe(ctx, "0 off")
		Expect(g.Outcome).To(Equal(verdict.GO), "%v", g.Reasons)
	}, SpecTimeout(3*time.Minute))

	It("the wrong order, the scheduler before the apiserver, is a HOLD on rollout-order naming the control plane", func(ctx SpecContext) {
		e.SetComponent(ctx, framework.KubeScheduler, schedOn)
		g := e.StageProbe(ctx, "wrong: scheduler first")
		Expect(g.Outcome).To(Equal(verdict.HOLD))
		Expect(g.Holds(verdict.RolloutOrder, "control-plane", "")).To(BeTrue(), "%v", g.Reasons)
		e.SetComponent(ctx, framework.KubeScheduler, t.Scheduler())
	}, SpecTimeout(6*time.Minute))

	It(fmt.Sprintf("the wrong order, %s kubelets before the apiserver, is a HOLD on rollout-order naming each node, saying whether the apiserver stored the declarations", canary.Name), func(ctx SpecContext) {
		e.SetPoolKubelets(ctx, canary, kubeletOn(canary), false)
		g := e.StageProbe(ctx, "wrong: kubelets first")
		Expect(g.Outcome).To(Equal(verdict.HOLD))
		for _, d := range e.PoolDeclarations(ctx, canary) {
			Expect(g.Holds(verdict.RolloutOrder, canary.Name, d.Node)).To(BeTrue(), "%v", g.Reasons)
			framework.Record(report.Observation{Kind: report.KindFinding, Pool: canary.Name, Node: d.Node, Set: d.Declared, OK: true,
				Text: fmt.Sprintf("kubelet NDF on under a gate-off apiserver: status.declaredFeatures stored=%t %v", d.Published, d.Declared)})
		}
		e.SetPoolKubelets(ctx, canary, canary.Intent(), true)
	}, SpecTimeout(6*time.Minute))

	It("stage 1, the apiserver: HOLD until the scheduler follows (gate-fingerprint, unexpected-admission), control pods still schedule", func(ctx SpecContext) {
		e.SetComponent(ctx, framework.KubeAPIServer, apiOn)
		g := e.StageProbe(ctx, "1 apiserver")
		Expect(g.Fired()).To(Equal([]verdict.Condition{verdict.GateFingerprint, verdict.UnexpectedAdmission}), "%v", g.Reasons)
	}, SpecTimeout(6*time.Minute))

	It("stage 2, the scheduler: GO, feature pods refused on every pool because no kubelet declares yet", func(ctx SpecContext) {
		e.SetComponent(ctx, framework.KubeScheduler, schedOn)
		g := e.StageProbe(ctx, "2 scheduler")
		Expect(g.Outcome).To(Equal(verdict.GO), "%v", g.Reasons)
		for _, p := range g.Pools {
			if p.Pool != topology.ControlPlanePool {
				Expect(p.Refusals).To(BeNumerically(">", 0), "pool %s took a feature pod no node declares", p.Pool)
			}
		}
	}, SpecTimeout(6*time.Minute))

	It(fmt.Sprintf("stage 3, the canary pool %s: GO, its nodes declare the oracle's set and take feature pods", canary.Name), func(ctx SpecContext) {
		e.SetPoolKubelets(ctx, canary, kubeletOn(canary), false)
		g := e.StageProbe(ctx, "3 canary")
		Expect(g.Outcome).To(Equal(verdict.GO), "%v", g.Reasons)
	}, SpecTimeout(6*time.Minute))

	It("stage 4, the rest of the fleet: GO; pools whose kubelets cannot have the gate keep refusing feature pods", func(ctx SpecContext) {
		for _, p := range rest {
			e.SetPoolKubelets(ctx, p, kubeletOn(p), false)
		}
		g := e.StageProbe(ctx, "4 fleet")
		Expect(g.Outcome).To(Equal(verdict.GO), "%v", g.Reasons)
		for _, p := range g.Pools {
			for _, l := range legacy {
				if p.Pool == l.Name {
					Expect(p.Refusals).To(BeNumerically(">", 0), "legacy pool %s took a feature pod", p.Pool)
				}
			}
		}
	}, SpecTimeout(8*time.Minute))

	It(fmt.Sprintf("rolling the control plane back (scheduler, then apiserver) keeps a running dependent pod on %s running, and binds a Pending one to the pool that lacks the feature once the scheduler stops filtering (F9), and control pods schedule", canary.Name), func(ctx SpecContext) {
		probe := framework.FeaturePod(t, restartAll)
		ns := e.Namespace(ctx, "cprollback")
		running := e.RunningPod(ctx, ns, "dependent", canary, probe.Apply)
		var pendingPool topology.Pool
		if len(legacy) > 0 {
			pendingPool = legacy[0]
			pending := e.Place(ctx, ns, framework.PoolPod("pending", pendingPool, probe.Apply))
			Expect(pending.Node).To(BeEmpty(), "precondition: refused on %s", pendingPool.Name)
		}
		e.SetComponent(ctx, framework.KubeScheduler, t.Scheduler())
		e.SetComponent(ctx, framework.KubeAPIServer, t.APIServer())
		still := e.WaitRunning(ctx, ns, running.Name)
		Expect(still.Spec.NodeName).To(Equal(running.Spec.NodeName))
		Expect(still.Status.ContainerStatuses[0].RestartCount).To(BeZero(), "the dependent pod was restarted by the rollback")
		if pendingPool.Name != "" {
			// The rolled-back scheduler is the topology's own, without the
			// plugin: nothing filters on declarations, so the pod is bound to
			// the pool its affinity names, which lacks the feature (F9).
			Expect(t.Scheduler().Enables(fixtures.NodeDeclaredFeatures)).To(BeFalse(), "precondition: the rollback turns the plugin off")
			By("the Pending dependent's fate: bound to pool " + pendingPool.Name + ", running there")
			bound := e.WaitBound(ctx, ns, "pending")
			Expect(e.PoolOf(ctx, bound.Spec.NodeName)).To(Equal(pendingPool.Name), "the Pending dependent went to %s", bound.Spec.NodeName)
			e.WaitRunning(ctx, ns, "pending")
			framework.Record(report.Observation{Kind: report.KindFinding, Pool: pendingPool.Name, Node: bound.Spec.NodeName, Feature: restartAll, OK: true,
				Text: "F9: control-plane rollback: a Pending dependent pod was bound to " + bound.Spec.NodeName + " and runs once the scheduler stopped filtering"})
		}
		control := e.Place(ctx, ns, framework.PoolPod("control-after", canary, nil))
		Expect(control.Node).NotTo(BeEmpty(), "control pod after rollback: %s", control.Message)
	}, SpecTimeout(8*time.Minute))
}
