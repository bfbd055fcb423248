//go:build e2e

package e2e

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/probes"
	"github.com/ndfq/ndfq/report"
)

// componentRollback is how one control-plane component turns the feature
// off, from the oracle: the gate and its dependents off, and where the
// binary has the gate locked, the previous minor emulated (1.37 -> 1.36).
type componentRollback struct {
	off     map[string]bool
	args    map[string]string // flags set with the rollback
	restore map[string]string // the same flags as the topology has them ("" removes)
	ok      bool
}

func rollbackOf(c topology.Component) componentRollback {
	minor := topology.GateMinor(cpMinor, c.ExtraArgs)
	r := componentRollback{}
	if gateLocked(minor, fixtures.NodeDeclaredFeatures) {
		emulated := fixtures.PreviousMinor(cpMinor)
		if gateLocked(emulated, fixtures.NodeDeclaredFeatures) {
			return r // locked in the only minor it may emulate too: no rollback exists
		}
		minor = emulated
		r.args = map[string]string{"emulated-version": emulated}
		r.restore = map[string]string{"emulated-version": c.ExtraArgs["emulated-version"]}
	}
	r.off = fixtures.GatesWithout(minor, c.FeatureGates, fixtures.NodeDeclaredFeatures)
	r.ok = len(fixtures.CheckGates(minor, r.off)) == 0
	return r
}

func (r componentRollback) String() string {
	s := surgery.FormatGatesOrNone(r.off)
	if ev := r.args["emulated-version"]; ev != "" {
		s = "--emulated-version=" + ev + " " + s
	}
	return s
}

var _ = Describe("Rolling the control plane back", ndf, disruptive, Serial, func() {
	cp := suiteTopology.ControlPlane
	if !apiServerIntends(fixtures.NodeDeclaredFeatures) || !schedulerIntends() {
		return // nothing to roll back; alpha-1.35's staged rollout rolls its own back
	}
	subject, okSubject := pick(declaresRestartAll)
	lacking, okLacking := pick(func(p topology.Pool) bool { return !declaresRestartAll(p) })
	sched, api := rollbackOf(cp.Scheduler), rollbackOf(cp.APIServer)
	if !okSubject || !sched.ok || !api.ok {
		return
	}

	It(fmt.Sprintf("the safe control-plane rollback (Pending dependents removed, then kube-scheduler %s, then kube-apiserver %s) keeps a running dependent on %s running, leaves nothing Pending, and control pods schedule on every pool", sched, api, subject.Name), func(ctx SpecContext) {
		ns := specNamespace(ctx, "cprollback")
		running := runningPod(ctx, ns, "dependent", subject, schedulingProbe(restartAll).Apply)
		if okLacking {
			pending, err := probes.Place(ctx, env.Clientset, ns, featurePod("pending", lacking))
			Expect(err).NotTo(HaveOccurred())
			Expect(pending.Node).To(BeEmpty(), "precondition: a dependent is Pending on %s", lacking.Name)
		}
		DeferCleanup(func(ctx SpecContext) {
			// Back on in the forward order: apiserver, then scheduler.
			setComponentFlags(ctx, "kube-apiserver", cp.APIServer.FeatureGates, api.restore)
			setComponentFlags(ctx, "kube-scheduler", cp.Scheduler.FeatureGates, sched.restore)
		}, NodeTimeout(6*time.Minute))

		// Step 1: no new dependents, and the Pending ones go: a scheduler
		// without the plugin binds them anywhere (finding F9).
		removed := 0
		for _, p := range podsIn(ctx, ns) {
			needs, err := probes.PodNeeds(&p, suiteTopology.ControlPlaneVersion())
			Expect(err).NotTo(HaveOccurred())
			if p.Spec.NodeName == "" && len(needs) > 0 {
				Expect(env.Clientset.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{})).To(Succeed())
				removed++
			}
		}
		Expect(removed).To(Equal(map[bool]int{true: 1, false: 0}[okLacking]), "Pending dependents removed")

		// Steps 2 and 3: the gates close in the reverse of the rollout order.
		setComponentFlags(ctx, "kube-scheduler", sched.off, sched.args)
		setComponentFlags(ctx, "kube-apiserver", api.off, api.args)

		still, err := probes.WaitRunning(ctx, env.Clientset, ns, running.Name)
		Expect(err).NotTo(HaveOccurred())
		Expect(still.Spec.NodeName).To(Equal(running.Spec.NodeName))
		Expect(still.Status.ContainerStatuses[0].RestartCount).To(BeZero(), "the dependent pod was restarted by the rollback")

		for _, pool := range poolsOf(suiteTopology) {
			res, err := probes.Place(ctx, env.Clientset, ns, fixtures.BasePod("control-"+pool.Name, topology.PoolLabel, pool.Name))
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Node).NotTo(BeEmpty(), "control pod on %s after the rollback: %s", pool.Name, res.Message)
		}
		// Pending as the scheduler sees it: not bound (a bound pod may still be
		// starting its containers).
		var unbound []string
		for _, p := range podsIn(ctx, ns) {
			if p.Spec.NodeName == "" && p.DeletionTimestamp == nil {
				unbound = append(unbound, p.Name)
			}
		}
		Expect(unbound).To(BeEmpty(), "pods left unscheduled after the rollback (baseline: none)")
		record(report.Observation{Kind: report.KindMeasure, Pool: subject.Name, OK: true,
			Text: fmt.Sprintf("control-plane rollback (scheduler %s, apiserver %s): running dependent kept running, %d Pending dependent(s) removed first, control pods bound on every pool", sched, api, removed)})
	}, SpecTimeout(12*time.Minute))
})

func podsIn(ctx SpecContext, ns string) []corev1.Pod {
	list, err := env.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	return list.Items
}
