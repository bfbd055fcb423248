//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/fixtures/claims"
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

	cells := claims.Matrix(t)
	for _, pool := range t.Pools() {
		for _, ctl := range fixtures.ControlUpdates() {
			cell := claims.Find(cells, claims.Update, pool.Name, claims.ControlFeature(ctl.Name))
			claimIt(cell, fmt.Sprintf("%s of a pod on %s is admitted", ctl.Name, framework.PoolDesc(pool)), func(ctx SpecContext) {
				ns := e.Namespace(ctx, "ctl")
				pod := e.RunningPod(ctx, ns, "control", pool, ctl.Apply)
				res, err := probes.Update(ctx, e.Clientset, ns, pod.Name, ctl.Subresource, ctl.Patch)
				Expect(err).NotTo(HaveOccurred())
				framework.RecordUpdate(cell, res)
				Expect(res.Code).To(BeEquivalentTo(http.StatusOK), "%s on node %s (%s): %s", ctl.Name, pod.Spec.NodeName, pool.Name, res.Message)
			})
		}
	}

	for _, probe := range fixtures.UpdateProbes(framework.CPMinor(t)) {
		for _, pool := range t.Pools() {
			cell := claims.Find(cells, claims.Update, pool.Name, probe.Feature)
			declares := cell.Expect == claims.Admitted
			claim := fmt.Sprintf("an update that needs %s of a pod on %s, which does not declare it, is rejected with 403 and the validator's message", probe.Feature, framework.PoolDesc(pool))
			switch {
			case declares:
				claim = fmt.Sprintf("an update that needs %s of a pod on %s, which declares it, is admitted and applied by its kubelet", probe.Feature, framework.PoolDesc(pool))
			case !cell.Applies():
				claim = fmt.Sprintf("an update that needs %s of a pod on %s", probe.Feature, framework.PoolDesc(pool))
			case cell.UpstreamBug != "":
				claim += " — as the release does, though upstream calls it a bug (" + cell.UpstreamBug + ")"
			}
			claimIt(cell, claim, func(ctx SpecContext) {
				e.ExpectPoolDeclares(ctx, pool, probe.Feature, declares)
				ns := e.Namespace(ctx, "upd")
				pod := e.StartedPod(ctx, ns, "resize", pool, probe.Apply, probe.Started)
				res, err := probes.Update(ctx, e.Clientset, ns, pod.Name, probe.Subresource, probe.Patch)
				Expect(err).NotTo(HaveOccurred())
				framework.RecordUpdate(cell, res)
				if declares {
					Expect(res.Code).To(BeEquivalentTo(http.StatusOK), "update needing %s on declaring node %s: %s", probe.Feature, pod.Spec.NodeName, res.Message)
					e.ExpectResizeOutcome(ctx, pool, probe, pod)
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

// KubeletAdmissionSpec binds pods that need a feature straight to each
// pool's node, past the scheduler, with a container that uses the rule: a
// declaring kubelet honours it, a publishing kubelet that lacks it fails
// the pod, a silent one runs the pod and ignores the rule (finding F1).
func KubeletAdmissionSpec(_ context.Context, inputGetter func() KubeletAdmissionSpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("KubeletAdmissionSpec"); e = in.Env })

	cells := claims.Matrix(t)
	for _, probe := range fixtures.SchedulingProbes(framework.CPMinor(t)) {
		for _, pool := range t.Pools() {
			cell := claims.Find(cells, claims.KubeletAdmission, pool.Name, probe.Feature)
			claim := fmt.Sprintf("a pod that needs %s bound by spec.nodeName to %s", probe.Feature, framework.PoolDesc(pool))
			switch cell.Expect {
			case claims.Honoured:
				if pool.Intent().Declares(probe.Feature) {
					claim += ", which declares it,"
				}
				claim += " runs and " + probe.Effect.Honoured
			case claims.SandboxRefused:
				claim += fmt.Sprintf(" is admitted and never started: its sandbox is refused with %q (finding %s)", probe.SandboxRefusal, probe.Effect.Finding)
			case claims.KubeletRejected:
				claim += " fails with " + fixtures.KubeletRejectionReason
			case claims.Ignored:
				claim += fmt.Sprintf(" runs unrefused and %s (finding %s)", probe.Effect.Ignored, probe.Effect.Finding)
			}
			claimIt(cell, claim, func(ctx SpecContext) {
				node, seen, res := e.KubeletOutcome(ctx, pool, probe)
				framework.RecordKubelet(cell, node, seen)
				switch cell.Expect {
				case claims.Ignored:
					framework.Record(report.Observation{Kind: report.KindFinding, Pool: pool.Name, Node: node, Feature: probe.Feature,
						Text: fmt.Sprintf("%s: a pod that needs %s, bound by spec.nodeName, runs on %s kubelets (%s) and %s", probe.Effect.Finding, probe.Feature, pool.PoolVersion(), pool.Name, probe.Effect.Text(seen))})
				case claims.SandboxRefused:
					framework.Record(report.Observation{Kind: report.KindFinding, Pool: pool.Name, Node: node, Feature: probe.Feature,
						Text: fmt.Sprintf("%s: a pod that needs %s, bound by spec.nodeName to a %s kubelet (%s), is admitted and never started: %s", probe.Effect.Finding, probe.Feature, pool.PoolVersion(), pool.Name, res.SandboxRefused)})
				}
				Expect(seen).To(Equal(cell.Expect), "kubelet on %s: phase %s %s %s %s", node, res.Phase, res.Reason, res.Message, res.SandboxRefused)
				switch cell.Expect {
				case claims.KubeletRejected:
					Expect(res.Message).To(Equal(fixtures.KubeletRejectionMessage(probe.Feature)))
				case claims.SandboxRefused:
					Expect(res.SandboxRefused).To(ContainSubstring(probe.SandboxRefusal))
				}
			})
		}
	}
}
