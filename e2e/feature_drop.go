//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/probes"
	"github.com/ndfq/ndfq/report"
)

// FeatureDropSpecInput is the input of FeatureDropSpec.
type FeatureDropSpecInput struct{ framework.SpecInput }

// FeatureDropSpec turns one feature off on a running kubelet three ways:
// the trap (restart with dependents on the node), the safe order (move
// them first), and the refusal when nowhere else keeps the feature.
func FeatureDropSpec(_ context.Context, inputGetter func() FeatureDropSpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("FeatureDropSpec"); e = in.Env })

	pairs, why := dropSubjects(t)
	if why != "" {
		notApplicable("turning "+restartAll+" off on a running kubelet: the trap, the safe order and the no-capacity refusal", why)
		return
	}
	probe := framework.SchedulingProbe(t, restartAll)
	for _, pair := range pairs {
		trapAndSafeOrder(t, func() *framework.Env { return e }, probe, pair.subject, pair.fallback)
	}
	// The refusal is the safe order's own logic: one kubelet shows it.
	noCapacity(func() *framework.Env { return e }, probe, pairs[0].subject)
}

// trapAndSafeOrder turns the feature off on subject's kubelet twice: as
// the trap (its running dependent is failed) and in the safe order (the
// dependent moves to fallback first).
func trapAndSafeOrder(t *topology.Topology, env func() *framework.Env, probe fixtures.SchedulingProbe, subject, fallback topology.Pool) {
	without := subject.Intent().Without(restartAll)

	It(fmt.Sprintf("restarting the kubelet of %s without %s fails the running pods that need it (PodFeatureUnsupported): the trap the safe order avoids", framework.PoolDesc(subject), restartAll), func(ctx SpecContext) {
		e := env()
		name, node := e.PoolNode(ctx, subject)
		ns := e.Namespace(ctx, "trap")
		pod := e.RunningPod(ctx, ns, "dependent", subject, probe.Apply)
		Expect(pod.Spec.NodeName).To(Equal(name))
		DeferCleanup(e.RestoreKubelet, subject, name, node, false, NodeTimeout(6*time.Minute))
		By("restarting the kubelet with " + surgery.FormatGatesOrNone(without.Gates) + " while its dependent runs")
		_, err := surgery.SetKubeletGates(node, without.Gates)
		Expect(err).NotTo(HaveOccurred())
		e.WaitKubelet(ctx, name, "", without.Gates)
		failed := e.WaitPodFailed(ctx, ns, pod.Name)
		Expect(failed.Status.Reason).To(Equal(fixtures.KubeletRejectionReason), "status %+v", failed.Status)
		Expect(failed.Status.Message).To(ContainSubstring(fixtures.KubeletRejectionMessage(restartAll)))
		e.WaitDeclared(ctx, name, without.MustDeclare())
		framework.Record(report.Observation{Kind: report.KindFinding, Pool: subject.Name, Node: name, Feature: restartAll, OK: true,
			Text: "kubelet restarted with the feature's gate off failed its running dependent pod: " + failed.Status.Reason})
	}, SpecTimeout(8*time.Minute))

	It(fmt.Sprintf("the safe order on %s moves dependent pods to %s before the gate goes: none is failed and the node stops declaring %s", framework.PoolDesc(subject), fallback.Name, restartAll), func(ctx SpecContext) {
		e := env()
		name, node := e.PoolNode(ctx, subject)
		ns := e.Namespace(ctx, "safe")
		pod := e.RunningPod(ctx, ns, "dependent", subject, probe.Apply)
		DeferCleanup(e.RestoreKubelet, subject, name, node, false, NodeTimeout(6*time.Minute))
		// Every state the original goes through, to its deletion: "none is
		// failed" needs them all, not a look after it may be gone.
		phases := e.WatchPod(ctx, ns, pod.Name)
		By("the safe order: capacity check, cordon, move, restart")
		_, err := surgery.DropKubeletFeatures(ctx, e.DropInput(subject, name, node, without))
		Expect(err).NotTo(HaveOccurred())
		e.WaitKubelet(ctx, name, "", without.Gates)
		e.WaitDeclared(ctx, name, without.MustDeclare())

		seen := phases()
		Expect(seen.Deleting).To(BeTrue(), "the original is deleted once its replacement runs (seen: %v)", seen.Phases)
		Expect(seen.Phases).NotTo(ContainElement(corev1.PodFailed), "the original was failed by its kubelet: %s", seen.Reason)
		moved := e.WaitRunning(ctx, ns, pod.Name+"-moved")
		Expect(e.Node(ctx, moved.Spec.NodeName).Labels[topology.PoolLabel]).To(Equal(fallback.Name))
		By("uncordoned, the node no longer takes what it cannot run")
		Expect(surgery.Cordon(ctx, e.Clientset, name, false)).To(Succeed())
		res := e.Place(ctx, ns, framework.PoolPod("after", subject, probe.Apply))
		Expect(res.Node).To(BeEmpty(), "feature pod bound to %s after it dropped the feature", name)
		Expect(res.Message).To(ContainSubstring(fixtures.SchedulerRefusal(framework.CPMinor(t), restartAll)))
	}, SpecTimeout(8*time.Minute))
}

// noCapacity asks the safe order to drop the feature on subject while no
// other node keeps it: it refuses and changes nothing.
func noCapacity(env func() *framework.Env, probe fixtures.SchedulingProbe, subject topology.Pool) {
	It(fmt.Sprintf("the safe order refuses to close gates on %s when no other node keeps %s, and changes nothing", framework.PoolDesc(subject), restartAll), func(ctx SpecContext) {
		e := env()
		name, node := e.PoolNode(ctx, subject)
		ns := e.Namespace(ctx, "nocap")
		e.RunningPod(ctx, ns, "dependent", subject, probe.Apply)
		var cordoned []string
		DeferCleanup(func(ctx SpecContext) {
			for _, n := range cordoned {
				Expect(surgery.Cordon(ctx, e.Clientset, n, false)).To(Succeed())
			}
		})
		By("cordoning every other node that declares " + restartAll)
		all, err := probes.Declarations(ctx, probes.DeclarationsInput{Clientset: e.Clientset, PoolLabel: topology.PoolLabel})
		Expect(err).NotTo(HaveOccurred())
		for _, d := range all {
			if d.Node != name && slices.Contains(d.Declared, restartAll) {
				Expect(surgery.Cordon(ctx, e.Clientset, d.Node, true)).To(Succeed())
				cordoned = append(cordoned, d.Node)
			}
		}
		before, err := surgery.KubeletGates(node)
		Expect(err).NotTo(HaveOccurred())
		_, err = surgery.DropKubeletFeatures(ctx, e.DropInput(subject, name, node, subject.Intent().With(map[string]bool{restartAll: false})))
		var noCap *surgery.NoCapacityError
		Expect(errors.As(err, &noCap)).To(BeTrue(), "got %v", err)
		Expect(err.Error()).To(ContainSubstring("not closing gates on %s", name))
		after, err := surgery.KubeletGates(node)
		Expect(err).NotTo(HaveOccurred())
		Expect(after).To(Equal(before), "the kubelet's gates were changed anyway")
		Expect(e.Node(ctx, name).Spec.Unschedulable).To(BeFalse(), "the node was cordoned anyway")
	}, SpecTimeout(4*time.Minute))
}
