//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
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
	env := func() *framework.Env { return e }

	cells := claims.Matrix(t)
	for _, pool := range t.Pools() {
		for _, ctl := range fixtures.ControlUpdates() {
			cell := claims.Find(cells, claims.Update, pool.Name, claims.ControlFeature(ctl.Name))
			claim := fmt.Sprintf("%s of a pod on %s is admitted", ctl.Name, framework.PoolDesc(pool))
			invalid := ""
			if ctl.Invalid != nil {
				invalid = ctl.Invalid(t.APIServer())
				claim = fmt.Sprintf("%s of a pod on %s needs no feature and is refused by validation (422), not by the validator", ctl.Name, framework.PoolDesc(pool))
				if invalid == "" {
					claim = fmt.Sprintf("%s of a pod on %s needs no feature: the apiserver admits it and drops the change (its resize strategy keeps the volumes)", ctl.Name, framework.PoolDesc(pool))
				}
			}
			passCellIt(cell, claim, updateOrder, env,
				framework.ObserveControlUpdate(pool, ctl), func(ctx SpecContext, o framework.Observation) {
					res := *o.Update
					framework.RecordUpdate(cell, res)
					if invalid != "" {
						Expect(res.Code).To(BeEquivalentTo(http.StatusUnprocessableEntity), "%s on node %s (%s): %s", ctl.Name, res.Node, pool.Name, res.Message)
						Expect(res.Message).To(And(ContainSubstring("is invalid"), ContainSubstring(invalid)), "validation's words")
						return
					}
					Expect(res.Code).To(BeEquivalentTo(http.StatusOK), "%s on node %s (%s): %s", ctl.Name, res.Node, pool.Name, res.Message)
					if ctl.Invalid != nil {
						Expect(o.SpecChanged).To(HaveValue(BeFalse()), "the apiserver drops what %s asks: the pod's generation must not move", ctl.Name)
					}
				})
		}
	}

	for _, probe := range fixtures.FeatureUpdates(framework.CPMinor(t)) {
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
			passCellIt(cell, claim, updateOrder, env, framework.ObserveFeatureUpdate(pool, probe), func(ctx SpecContext, o framework.Observation) {
				e.ExpectPoolDeclares(ctx, pool, probe.Feature, declares)
				res := *o.Update
				framework.RecordUpdate(cell, res)
				if declares {
					Expect(res.Code).To(BeEquivalentTo(http.StatusOK), "update needing %s on declaring node %s: %s", probe.Feature, res.Node, res.Message)
					expectResizeOutcome(ctx, e, pool, probe, o)
					return
				}
				Expect(res.Code).To(BeEquivalentTo(http.StatusForbidden), "update needing %s on node %s (%s) was answered %d %s", probe.Feature, res.Node, pool.Name, res.Code, res.Message)
				Expect(res.Message).To(Equal(fixtures.UpdateRejection(res.Pod, probe.Feature, res.Node)))
			})
		}
	}
	validatorEdges(cells, framework.CPMinor(t), env)
	subresourceEdges(t, cells, env)
}

// subresourceEdges are the subresources NodeDeclaredFeatureValidator does
// not judge: an ephemeral container with bindMountOptions is admitted for
// a pod on a pool that lacks VolumeBindMountOptions, and its kubelet runs
// it without them (F25); the status subresource's cells say why not.
func subresourceEdges(t *topology.Topology, cells []claims.Cell, env func() *framework.Env) {
	lacking, ok := framework.PoolWhere(t.Pools(), func(p topology.Pool) bool { return !p.Intent().Declares(claims.EphemeralFeature) })
	if !ok {
		lacking = t.Pools()[0] // every pool declares it: the option must be honoured
	}
	declares := lacking.Intent().Declares(claims.EphemeralFeature)
	for _, cell := range cells {
		if cell.Kind != claims.Update || cell.Pool != claims.EphemeralSubresource && cell.Pool != claims.StatusSubresource {
			continue
		}
		claim := fmt.Sprintf("an update through %s: %s", cell.Pool, cell.Feature)
		if cell.Applies() {
			claim = fmt.Sprintf("an ephemeral container with bindMountOptions added to a pod on %s, which does not declare %s, is admitted (NodeDeclaredFeatureValidator skips %s) and its kubelet runs it without them (F25)",
				framework.PoolDesc(lacking), cell.Feature, cell.Pool)
			if declares {
				claim = fmt.Sprintf("an ephemeral container with bindMountOptions added to a pod on %s, which declares %s, is admitted and its kubelet honours them", framework.PoolDesc(lacking), cell.Feature)
			}
		}
		passCellIt(cell, claim, updateOrder, env, framework.ObserveEphemeral(lacking), func(ctx SpecContext, o framework.Observation) {
			res := *o.Update
			framework.RecordUpdate(cell, res)
			Expect(res.Answer()).To(Equal(cell.Expect), "ephemeral container on %s (%s): %s", res.Node, lacking.Name, res.Message)
			Expect(o.Kubelet).NotTo(BeNil(), "what the kubelet of %s did: %s", res.Node, o.Err)
			want := fixtures.Ignored
			if declares {
				want = fixtures.Honoured
			}
			Expect(o.Kubelet.Seen).To(Equal(want), "the kubelet of %s with bindMountOptions of an ephemeral container", res.Node)
		})
	}
}

// validatorEdges are the validator's edge cases, once per control plane:
// an update that needs a feature of a pod bound to a node that does not
// exist is refused in its words; of a pod bound to none, it is not the
// validator's to judge.
func validatorEdges(cells []claims.Cell, cpMinor string, env func() *framework.Env) {
	const absent = "ndfq-no-such-node"
	for _, cell := range cells {
		pool := cell.Pool
		if cell.Kind != claims.Update || pool != claims.AbsentNode && pool != claims.NoNode {
			continue
		}
		probe, _ := fixtures.FeatureUpdateFor(cpMinor, cell.Feature)
		node, claim := absent, fmt.Sprintf("an update that needs %s of a pod bound to a node that does not exist is rejected with 403: node %q not found", cell.Feature, absent)
		if pool == claims.NoNode {
			node, claim = "", fmt.Sprintf("an update that needs %s of a pod bound to no node is admitted: the validator judges bound pods only", cell.Feature)
		}
		if !cell.Applies() {
			claim = "an update that needs a feature of a pod on " + pool
		}
		passCellIt(cell, claim, updateOrder, env, framework.ObserveUpdateWithoutNode(probe, node), func(ctx SpecContext, o framework.Observation) {
			res := *o.Update
			framework.RecordUpdate(cell, res)
			if node == "" {
				Expect(res.Code).To(BeEquivalentTo(http.StatusOK), "update needing %s of an unbound pod: %s", cell.Feature, res.Message)
				return
			}
			Expect(res.Code).To(BeEquivalentTo(http.StatusForbidden), "update needing %s of a pod bound to %s: %d %s", cell.Feature, node, res.Code, res.Message)
			Expect(res.Message).To(Equal(fixtures.UpdateNodeNotFound(res.Pod, node)))
		})
	}
}

// expectResizeOutcome: the declaring pool's kubelet applied an admitted
// update or, where the oracle says this runtime makes it infeasible,
// called it so in those words (recorded as a finding: the kubelet
// declares what it then refuses).
func expectResizeOutcome(ctx context.Context, e *framework.Env, pool topology.Pool, probe fixtures.FeatureUpdate, o framework.Observation) {
	GinkgoHelper()
	if probe.Applied == nil {
		return
	}
	want := framework.ResizeApplied
	if probe.Infeasible != nil {
		if why := probe.Infeasible(e.NodeRuntime(ctx, pool, o.Node)); why != "" {
			want = why
			framework.Record(report.Observation{Kind: report.KindFinding, Pool: pool.Name, Node: o.Node, Feature: probe.Feature, OK: o.Resize == want,
				Text: fmt.Sprintf("F14: %s declares %s and its apiserver admits the update, yet the kubelet leaves it pending: Infeasible %q", o.Node, probe.Feature, o.Resize)})
		}
	}
	Expect(o.Resize).To(Equal(want), "what the kubelet of %s did with the admitted update needing %s", o.Node, probe.Feature)
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
	env := func() *framework.Env { return e }

	cells := claims.Matrix(t)
	for _, probe := range fixtures.FeaturePods(framework.CPMinor(t)) {
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
			passCellIt(cell, claim, kubeletOrder, env, framework.ObserveKubelet(pool, probe), func(ctx SpecContext, o framework.Observation) {
				node, seen, res := o.Node, o.Kubelet.Seen, o.Kubelet.Admission
				framework.RecordCell(cell, node, seen, "")
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
