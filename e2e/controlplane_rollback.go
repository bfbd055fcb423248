//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/kubeversion"
	"github.com/ndfq/ndfq/report"
)

// ControlPlaneRollbackSpecInput is the input of ControlPlaneRollbackSpec.
type ControlPlaneRollbackSpecInput struct{ framework.SpecInput }

// ControlPlaneRollbackSpec turns the feature off on the scheduler, then the
// apiserver (the reverse of the rollout order), after removing Pending
// dependents: running dependents are unharmed, nothing is left Pending.
func ControlPlaneRollbackSpec(_ context.Context, inputGetter func() ControlPlaneRollbackSpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("ControlPlaneRollbackSpec"); e = in.Env })

	const claim = "the safe control-plane rollback keeps running dependents running and leaves nothing Pending"
	if !t.APIServer().Enables(fixtures.NodeDeclaredFeatures) || !t.Scheduler().Enables(fixtures.NodeDeclaredFeatures) {
		// alpha-1.35's staged rollout rolls its own back.
		notApplicable(claim, "the control plane runs without NodeDeclaredFeatures in this topology: there is nothing to roll back")
		return
	}
	subject, okSubject := framework.PoolWhere(t.Workers, framework.Declares(restartAll))
	lacking, okLacking := framework.PoolWhere(t.Workers, framework.Lacks(restartAll))
	sched, okSched := t.Scheduler().Rollback()
	api, okAPI := t.APIServer().Rollback()
	switch {
	case t.ControlPlaneCount() > 1:
		// Its surgery changes the first control-plane node's components.
		notApplicable(claim, fmt.Sprintf("the control plane has %d nodes: this rollback restarts one node's components; on an HA control plane the ha specs change one apiserver at a time", t.ControlPlaneCount()))
		return
	case !okSubject:
		notApplicable(claim, "no worker pool declares "+restartAll+" for a running dependent")
		return
	case !okSched || !okAPI:
		notApplicable(claim, fmt.Sprintf("control plane %s has NodeDeclaredFeatures locked on, and so has the minor it may emulate (%s): no rollback exists", t.ControlPlaneVersion(), kubeversion.PreviousMinor(framework.CPMinor(t))))
		return
	}

	It(fmt.Sprintf("the safe control-plane rollback (Pending dependents removed, then kube-scheduler %s, then kube-apiserver %s) keeps a running dependent on %s running, leaves nothing Pending, and control pods schedule on every pool", describeRollback(sched), describeRollback(api), subject.Name), func(ctx SpecContext) {
		probe := framework.FeaturePod(t, restartAll)
		// Registered first, so it runs last: the namespace's pods go while
		// the kubelets still watch the rolled-back apiserver; after its
		// restore they would reconnect first (~50 s here).
		DeferCleanup(func(ctx SpecContext) {
			// Back on in the forward order: apiserver, then scheduler.
			e.SetComponent(ctx, framework.KubeAPIServer, t.APIServer())
			e.SetComponent(ctx, framework.KubeScheduler, t.Scheduler())
		}, NodeTimeout(6*time.Minute))
		ns := e.Namespace(ctx, "cprollback")
		running := e.RunningPod(ctx, ns, "dependent", subject, probe.Apply)
		if okLacking {
			pending := e.Place(ctx, ns, framework.PoolPod("pending", lacking, probe.Apply))
			Expect(pending.Node).To(BeEmpty(), "precondition: a dependent is Pending on %s", lacking.Name)
		}

		By("step 1: the Pending dependents go; a scheduler without the plugin binds them anywhere (finding F9)")
		removed := 0
		for _, p := range e.PodsIn(ctx, ns) {
			needs, err := fixtures.PodNeeds(&p, t.ControlPlaneVersion().String())
			Expect(err).NotTo(HaveOccurred())
			if p.Spec.NodeName == "" && len(needs) > 0 {
				Expect(e.Clientset.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{})).To(Succeed())
				removed++
			}
		}
		Expect(removed).To(Equal(map[bool]int{true: 1, false: 0}[okLacking]), "Pending dependents removed")

		By("steps 2 and 3: the gates close in the reverse of the rollout order")
		e.SetComponent(ctx, framework.KubeScheduler, sched.Applied(t.Scheduler()))
		e.SetComponent(ctx, framework.KubeAPIServer, api.Applied(t.APIServer()))
		apiBack := time.Now()

		still := e.WaitRunning(ctx, ns, running.Name)
		Expect(still.Spec.NodeName).To(Equal(running.Spec.NodeName))
		Expect(still.Status.ContainerStatuses[0].RestartCount).To(BeZero(), "the dependent pod was restarted by the rollback")

		// The claim is about the rolled-back gates, not the restart's lapse
		// of node leases: wait until every kubelet is heard from through the
		// restarted apiserver, and for nodes the controller tainted meanwhile.
		if lapsed := e.WaitNodesSettled(ctx, apiBack); len(lapsed) > 0 {
			framework.Record(report.Observation{Kind: report.KindFinding, OK: true,
				Text: fmt.Sprintf("after the control-plane restarts, nodes %v were NotReady or tainted unreachable for a while (leases unrenewed while the apiserver was down); waited for them before placing control pods", lapsed)})
		}
		for _, pool := range t.Pools() {
			res := e.Place(ctx, ns, framework.PoolPod("control-"+pool.Name, pool, nil))
			if res.Node == "" {
				// Evidence: which taint refused it (the summary names none, F33).
				for _, n := range e.NodesOfPool(ctx, pool.Name) {
					AddReportEntry("taints of "+n.Name, n.Spec.Taints)
				}
			}
			Expect(res.Node).NotTo(BeEmpty(), "control pod on %s after the rollback: %s", pool.Name, res.Message)
		}
		// Pending as the scheduler sees it: not bound (a bound pod may still
		// be starting its containers).
		var unbound []string
		for _, p := range e.PodsIn(ctx, ns) {
			if p.Spec.NodeName == "" && p.DeletionTimestamp == nil {
				unbound = append(unbound, p.Name)
			}
		}
		Expect(unbound).To(BeEmpty(), "pods left unscheduled after the rollback (baseline: none)")
		framework.Record(report.Observation{Kind: report.KindMeasure, Pool: subject.Name, OK: true,
			Text: fmt.Sprintf("control-plane rollback (scheduler %s, apiserver %s): running dependent kept running, %d Pending dependent(s) removed first, control pods bound on every pool", describeRollback(sched), describeRollback(api), removed)})
	}, SpecTimeout(12*time.Minute))
}

// describeRollback renders a rollback as the flags it sets.
func describeRollback(r fixtures.Rollback) string {
	s := surgery.FormatGatesOrNone(r.Gates)
	if r.EmulatedVersion != "" {
		s = "--emulated-version=" + r.EmulatedVersion + " " + s
	}
	return s
}
