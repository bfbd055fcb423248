//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/wait"
	"github.com/ndfq/ndfq/probes"
	"github.com/ndfq/ndfq/report"
)

// UpdateAdmissionSpecInput is the input of UpdateAdmissionSpec.
type UpdateAdmissionSpecInput struct{ framework.SpecInput }

// UpdateAdmissionSpec proves control updates are admitted everywhere, and
// updates that need a feature are rejected (403) where the bound node
// lacks it and admitted and applied where it declares it.
func UpdateAdmissionSpec(_ context.Context, inputGetter func() UpdateAdmissionSpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("UpdateAdmissionSpec"); e = in.Env })

	for _, pool := range t.Pools() {
		for _, ctl := range fixtures.ControlUpdates() {
			It(fmt.Sprintf("%s of a pod on %s is admitted", ctl.Name, framework.PoolDesc(pool)), func(ctx SpecContext) {
				ns := e.Namespace(ctx, "ctl")
				pod := e.RunningPod(ctx, ns, "control", pool, ctl.Apply)
				res, err := probes.Update(ctx, e.Clientset, ns, pod.Name, ctl.Subresource, ctl.Patch)
				Expect(err).NotTo(HaveOccurred())
				framework.RecordUpdate(pool.Name, "(none)", 200, res)
				Expect(res.Code).To(BeEquivalentTo(http.StatusOK), "%s on node %s (%s): %s", ctl.Name, pod.Spec.NodeName, pool.Name, res.Message)
			})
		}
	}

	for _, probe := range fixtures.UpdateProbes(framework.CPMinor(t)) {
		if !t.APIServer().Enables(probe.APIServerGate) || !t.APIServer().Enables(fixtures.NodeDeclaredFeatures) {
			continue // the validator is a no-op with the apiserver's gate off
		}
		for _, pool := range t.Pools() {
			declares := pool.Intent().Declares(probe.Feature)
			claim := fmt.Sprintf("an update that needs %s of a pod on %s, which does not declare it, is rejected with 403 and the validator's message", probe.Feature, framework.PoolDesc(pool))
			if declares {
				claim = fmt.Sprintf("an update that needs %s of a pod on %s, which declares it, is admitted and applied by its kubelet", probe.Feature, framework.PoolDesc(pool))
			}
			It(claim, func(ctx SpecContext) {
				e.ExpectPoolDeclares(ctx, pool, probe.Feature, declares)
				ns := e.Namespace(ctx, "upd")
				pod := e.RunningPod(ctx, ns, "resize", pool, probe.Apply)
				res, err := probes.Update(ctx, e.Clientset, ns, pod.Name, probe.Subresource, probe.Patch)
				Expect(err).NotTo(HaveOccurred())
				framework.RecordUpdate(pool.Name, probe.Feature, map[bool]int32{true: 200, false: 403}[declares], res)
				if declares {
					Expect(res.Code).To(BeEquivalentTo(http.StatusOK), "update needing %s on declaring node %s: %s", probe.Feature, pod.Spec.NodeName, res.Message)
					Expect(wait.Until(ctx, wait.PodRunning, "kubelet on "+pod.Spec.NodeName+" to apply the resize", func(ctx context.Context) (bool, string, error) {
						p, err := e.Clientset.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
						if err != nil {
							return false, err.Error(), nil
						}
						return probe.Applied(p), fmt.Sprintf("status resources %v", p.Status.Resources), nil
					})).To(Succeed())
					return
				}
				Expect(res.Code).To(BeEquivalentTo(http.StatusForbidden), "update needing %s on node %s (%s) was answered %d %s", probe.Feature, pod.Spec.NodeName, pool.Name, res.Code, res.Message)
				Expect(res.Message).To(Equal(fixtures.UpdateRejection(pod.Name, probe.Feature, pod.Spec.NodeName)))
			})
		}
	}
}

// KubeletAdmissionSpecInput is the input of KubeletAdmissionSpec.
type KubeletAdmissionSpecInput struct{ framework.SpecInput }

// KubeletAdmissionSpec binds pods that need a feature straight to nodes
// that lack it: a publishing kubelet fails them, a silent one runs them
// (finding F1).
func KubeletAdmissionSpec(_ context.Context, inputGetter func() KubeletAdmissionSpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("KubeletAdmissionSpec"); e = in.Env })

	for _, probe := range fixtures.SchedulingProbes(framework.CPMinor(t)) {
		if !t.APIServer().Enables(probe.APIServerGate) {
			continue
		}
		for _, pool := range t.Pools() {
			if pool.Intent().Declares(probe.Feature) {
				continue // a declaring kubelet runs it: the scheduling specs show that
			}
			if pool.Intent().Publishes() {
				It(fmt.Sprintf("a pod that needs %s bound by spec.nodeName to %s fails with %s", probe.Feature, framework.PoolDesc(pool), fixtures.KubeletRejectionReason), func(ctx SpecContext) {
					res := e.BindToPool(ctx, pool, probe)
					Expect(res.Phase).To(Equal(corev1.PodFailed), "kubelet on %s let the pod run", res.Node)
					Expect(res.Reason).To(Equal(fixtures.KubeletRejectionReason))
					Expect(res.Message).To(Equal(fixtures.KubeletRejectionMessage(probe.Feature)))
					framework.Record(report.Observation{Kind: report.KindKubelet, Pool: pool.Name, Node: res.Node, Feature: probe.Feature, Expected: fixtures.KubeletRejectionReason, Seen: res.Reason, OK: true})
				})
				continue
			}
			// Finding F1 (docs/findings.md): nothing refuses it; the rule is not honoured.
			It(fmt.Sprintf("a pod that needs %s bound by spec.nodeName to %s runs unrefused: the requirement is silently not honoured (finding F1)", probe.Feature, framework.PoolDesc(pool)), func(ctx SpecContext) {
				res := e.BindToPool(ctx, pool, probe)
				Expect(res.Phase).To(Equal(corev1.PodRunning), "kubelet on %s: %s %s", res.Node, res.Reason, res.Message)
				framework.Record(report.Observation{Kind: report.KindFinding, Pool: pool.Name, Node: res.Node, Feature: probe.Feature,
					Text: fmt.Sprintf("F1: a pod that needs %s, bound by spec.nodeName, runs on %s kubelets (%s) and the requirement is not honoured", probe.Feature, pool.PoolVersion(), pool.Name)})
			})
		}
	}
}
