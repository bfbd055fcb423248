//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/poll"
	"github.com/ndfq/ndfq/probes"
	"github.com/ndfq/ndfq/report"
)

// runningPod places a shaped probe pod on the pool and waits until it runs.
func runningPod(ctx SpecContext, ns, name string, pool topology.Pool, shape func(*corev1.Pod)) *corev1.Pod {
	pod := fixtures.BasePod(name, topology.PoolLabel, pool.Name)
	shape(pod)
	res, err := probes.Place(ctx, env.Clientset, ns, pod)
	Expect(err).NotTo(HaveOccurred())
	Expect(res.Node).NotTo(BeEmpty(), "pod %s not bound on %s: %s", name, pool.Name, res.Message)
	running, err := probes.WaitRunning(ctx, env.Clientset, ns, name)
	Expect(err).NotTo(HaveOccurred())
	return running
}

var _ = Describe("Pod updates the bound node cannot honour", ndf, Label("admission"), func() {
	for _, pool := range poolsOf(suiteTopology) {
		pool := pool
		for _, ctl := range fixtures.ControlUpdates() {
			ctl := ctl
			It(fmt.Sprintf("%s of a pod on %s is admitted", ctl.Name, poolDesc(pool)), func(ctx SpecContext) {
				ns := specNamespace(ctx, "ctl")
				pod := runningPod(ctx, ns, "control", pool, ctl.Apply)
				res, err := probes.Update(ctx, env.Clientset, ns, pod.Name, ctl.Subresource, ctl.Patch)
				Expect(err).NotTo(HaveOccurred())
				recordUpdate(pool.Name, "(none)", 200, res)
				Expect(res.Code).To(BeEquivalentTo(http.StatusOK), "%s on node %s (%s): %s", ctl.Name, pod.Spec.NodeName, pool.Name, res.Message)
			})
		}
	}

	for _, probe := range fixtures.UpdateProbes(cpMinor) {
		probe := probe
		if !apiServerIntends(probe.APIServerGate) || !apiServerIntends(fixtures.NodeDeclaredFeatures) {
			continue // the validator is a no-op with the apiserver's gate off
		}
		for _, pool := range poolsOf(suiteTopology) {
			pool := pool
			declares := slices.Contains(intendedSet(pool), probe.Feature)
			claim := fmt.Sprintf("an update that needs %s of a pod on %s, which does not declare it, is rejected with 403 and the validator's message", probe.Feature, poolDesc(pool))
			if declares {
				claim = fmt.Sprintf("an update that needs %s of a pod on %s, which declares it, is admitted and applied by its kubelet", probe.Feature, poolDesc(pool))
			}
			It(claim, func(ctx SpecContext) {
				expectPoolDeclares(ctx, pool, probe.Feature, declares)
				ns := specNamespace(ctx, "upd")
				pod := runningPod(ctx, ns, "resize", pool, probe.Apply)
				res, err := probes.Update(ctx, env.Clientset, ns, pod.Name, probe.Subresource, probe.Patch)
				Expect(err).NotTo(HaveOccurred())
				recordUpdate(pool.Name, probe.Feature, map[bool]int32{true: 200, false: 403}[declares], res)
				if declares {
					Expect(res.Code).To(BeEquivalentTo(http.StatusOK), "update needing %s on declaring node %s: %s", probe.Feature, pod.Spec.NodeName, res.Message)
					Expect(poll.Until(ctx, "wait-pod-running", "kubelet on "+pod.Spec.NodeName+" to apply the resize", func(ctx2 context.Context) (bool, string, error) {
						p, err := env.Clientset.CoreV1().Pods(ns).Get(ctx2, pod.Name, metav1.GetOptions{})
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
})

var _ = Describe("Kubelet-side admission of pods bound directly", ndf, Label("admission"), func() {
	for _, probe := range fixtures.SchedulingProbes(cpMinor) {
		probe := probe
		if !apiServerIntends(probe.APIServerGate) {
			continue
		}
		for _, pool := range poolsOf(suiteTopology) {
			pool := pool
			if slices.Contains(intendedSet(pool), probe.Feature) {
				continue // a declaring kubelet runs it: the scheduling specs show that
			}
			if kubeletPublishes(pool) {
				It(fmt.Sprintf("a pod that needs %s bound by spec.nodeName to %s fails with %s", probe.Feature, poolDesc(pool), fixtures.KubeletRejectionReason), func(ctx SpecContext) {
					res := bindToPool(ctx, pool, probe)
					node := res.Node
					Expect(res.Phase).To(Equal(corev1.PodFailed), "kubelet on %s let the pod run", node)
					Expect(res.Reason).To(Equal(fixtures.KubeletRejectionReason))
					Expect(res.Message).To(Equal(fixtures.KubeletRejectionMessage(probe.Feature)))
					record(report.Observation{Kind: report.KindKubelet, Pool: pool.Name, Node: node, Feature: probe.Feature, Expected: fixtures.KubeletRejectionReason, Seen: res.Reason, OK: true})
				})
				continue
			}
			// Finding F1 (docs/findings.md): nothing refuses it; the rule is not honoured.
			It(fmt.Sprintf("a pod that needs %s bound by spec.nodeName to %s runs unrefused: the requirement is silently not honoured (finding F1)", probe.Feature, poolDesc(pool)), func(ctx SpecContext) {
				res := bindToPool(ctx, pool, probe)
				node := res.Node
				Expect(res.Phase).To(Equal(corev1.PodRunning), "kubelet on %s: %s %s", node, res.Reason, res.Message)
				record(report.Observation{Kind: report.KindFinding, Pool: pool.Name, Node: node, Feature: probe.Feature,
					Text: fmt.Sprintf("F1: a pod that needs %s, bound by spec.nodeName, runs on %s kubelets (%s) and the requirement is not honoured", probe.Feature, pool.PoolVersion(), pool.Name)})
			})
		}
	}
})

func recordUpdate(pool, feature string, expected int32, res probes.UpdateResult) {
	record(report.Observation{Kind: report.KindUpdate, Pool: pool, Feature: feature, Node: res.Node,
		Expected: fmt.Sprint(expected), Seen: fmt.Sprint(res.Code), OK: res.Code == expected})
}

// bindToPool creates a pod that needs the probe's feature with spec.nodeName
// set to the pool's first node, bypassing the scheduler.
func bindToPool(ctx SpecContext, pool topology.Pool, probe fixtures.SchedulingProbe) probes.Admission {
	ns := specNamespace(ctx, "kadm")
	node := declarationsOfPool(ctx, pool)[0].Node
	pod := fixtures.BasePod("bound", topology.PoolLabel, pool.Name)
	probe.Apply(pod)
	res, err := probes.BindDirectly(ctx, env.Clientset, ns, node, pod)
	Expect(err).NotTo(HaveOccurred())
	return res
}
