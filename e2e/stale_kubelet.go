//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/report"
	"github.com/ndfq/ndfq/verdict"
)

// StaleKubeletSpecInput is the input of StaleKubeletSpec.
type StaleKubeletSpecInput struct{ framework.SpecInput }

// StaleKubeletSpec stops a declaring kubelet: its declarations stay, the
// probe calls them stale, feature pods wait and control pods go elsewhere;
// restarted, the node is fresh and takes the waiting pod.
func StaleKubeletSpec(_ context.Context, inputGetter func() StaleKubeletSpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("StaleKubeletSpec"); e = in.Env })

	pairs, why := dropSubjects(t)
	if why != "" {
		notApplicable("a stopped kubelet keeps its declarations and the probe calls them stale", why)
		return
	}
	for _, pair := range pairs {
		staleKubelet(t, func() *framework.Env { return e }, pair.subject, pair.fallback)
	}
}

// staleKubelet stops subject's kubelet; fallback takes the control pod.
func staleKubelet(t *topology.Topology, env func() *framework.Env, subject, fallback topology.Pool) {
	It(fmt.Sprintf("a stopped kubelet on %s keeps its declarations; the probe calls them stale; feature pods wait and control pods go elsewhere; restarted, the node is fresh and takes the waiting pod", framework.PoolDesc(subject)), func(ctx SpecContext) {
		e := env()
		probe := framework.SchedulingProbe(t, restartAll)
		name, node := e.PoolNode(ctx, subject)
		before := framework.SortedCopy(e.DeclaredOf(ctx, name))
		Expect(before).To(ContainElement(restartAll), "precondition")
		By("stopping the kubelet on " + name)
		Expect(surgery.StopKubelet(node)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(surgery.StartKubelet(node)).To(Succeed())
			e.WaitNodeReady(ctx, name, true)
		}, NodeTimeout(6*time.Minute))
		e.WaitNodeReady(ctx, name, false)
		Expect(framework.SortedCopy(e.DeclaredOf(ctx, name))).To(Equal(before), "a NotReady node's declarations are left as they were")

		By("the probe holds on stale declarations")
		e.ExpectHold(ctx, verdict.StaleDeclarations, subject.Name, name, "--freshness", "30s")

		By("a feature pod waits; a control pod goes to " + fallback.Name)
		ns := e.Namespace(ctx, "stale")
		waiting := e.Place(ctx, ns, framework.PoolPod("waits", subject, probe.Apply))
		Expect(waiting.Node).To(BeEmpty(), "a feature pod was bound to the NotReady node %s", name)
		elsewhere := e.Place(ctx, ns, framework.PoolPod("elsewhere", fallback, nil))
		Expect(elsewhere.Node).NotTo(BeEmpty(), "control pod on %s while %s is down: %s", fallback.Name, name, elsewhere.Message)

		By("restarting the kubelet: the waiting pod lands there")
		Expect(surgery.StartKubelet(node)).To(Succeed())
		e.WaitNodeReady(ctx, name, true)
		running := e.WaitRunning(ctx, ns, "waits")
		Expect(running.Spec.NodeName).To(Equal(name), "the waiting feature pod lands on the node once it is back")
		e.WaitKubelet(ctx, name, "", nil)
		decls := e.PoolDeclarations(ctx, subject)
		Expect(decls[0].Matches()).To(BeTrue(), "after restart: declares %v, oracle %v", decls[0].Declared, decls[0].Expected)
		framework.Record(report.Observation{Kind: report.KindMeasure, Pool: subject.Name, Node: name, OK: true,
			Text: "stopped kubelet: declarations unchanged while NotReady; probe HOLD stale-declarations; waiting feature pod bound after restart"})
	}, SpecTimeout(8*time.Minute))
}

// dropPair is a worker pool whose kubelets declare the placement feature
// and may turn it off, and another pool (the control plane's included)
// that keeps it for pods to move to.
type dropPair struct{ subject, fallback topology.Pool }

// dropSubjects is one such pair per kubelet minor (every publishing kind
// of kubelet gets the scenario). why says what the topology lacks where it
// has none, or its control plane refuses nothing.
func dropSubjects(t *topology.Topology) (pairs []dropPair, why string) {
	if why := whyNoRefusal(t); why != "" {
		return nil, why
	}
	subjects := framework.PoolsPerMinor(t.Workers, func(p topology.Pool) bool {
		return p.Intent().Declares(restartAll) && p.Intent().CanTurnOff(restartAll)
	})
	if len(subjects) == 0 {
		return nil, "no worker pool declares " + restartAll + " with a gate that may be turned off"
	}
	for _, subject := range subjects {
		fallback, ok := framework.PoolWhere(t.Pools(), func(p topology.Pool) bool {
			return p.Intent().Declares(restartAll) && p.Name != subject.Name
		})
		if !ok {
			return nil, "no second pool declares " + restartAll + " for its pods to move to"
		}
		pairs = append(pairs, dropPair{subject, fallback})
	}
	return pairs, ""
}

// whyNoRefusal is "" where t's control plane refuses pods that need the
// placement feature; otherwise why it refuses nothing (the staged-rollout
// scenario starts there).
func whyNoRefusal(t *topology.Topology) string {
	switch {
	case !t.Scheduler().Enables(fixtures.NodeDeclaredFeatures):
		return "kube-scheduler has NodeDeclaredFeatures off in this topology: nothing refuses a pod (the staged rollout covers that stage)"
	case !t.APIServer().Enables(restartAll):
		return "kube-apiserver has " + restartAll + " off in this topology: it drops the field, so no pod can need the feature"
	}
	return ""
}
