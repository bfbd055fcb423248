//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"

	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/wait"
	"github.com/ndfq/ndfq/probes"
	"github.com/ndfq/ndfq/report"
	"github.com/ndfq/ndfq/verdict"
)

// HAWindowSpecInput is the input of HAWindowSpec.
type HAWindowSpecInput struct{ framework.SpecInput }

// haAttempts is how many updates go through the load balancer per phase:
// enough that two apiservers taking turns both answer several.
const haAttempts = 20

// validatorOff is what the rolling window changes on one apiserver: the
// admission plugin that rejects updates the bound node cannot honour.
var validatorOff = map[string]string{"disable-admission-plugins": fixtures.ValidatorPlugin}

// HAWindowSpec changes one apiserver of an HA control plane at a time, as
// a rolling control-plane change does: while one runs without the
// validator, whether an update the bound node cannot honour is rejected
// depends on which apiserver answered; once all agree, none is admitted.
func HAWindowSpec(_ context.Context, inputGetter func() HAWindowSpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("HAWindowSpec"); e = in.Env })

	const claim = "while the apiservers of an HA control plane disagree on the validator, an update the bound node cannot honour is admitted or rejected by whichever apiserver answers; once they agree, none is admitted"
	if t.ControlPlaneCount() < 2 {
		notApplicable(claim, oneAPIServer)
		return
	}
	probe, okProbe := repeatableUpdate(t.APIServer())
	if !okProbe {
		notApplicable(claim, fmt.Sprintf("no update probe that can be repeated needs a feature kube-apiserver %s infers with its gates", t.ControlPlaneVersion()))
		return
	}
	lacking, okLacking := framework.PoolWhere(t.Workers, framework.Lacks(probe.Feature))
	if !okLacking {
		notApplicable(claim, "every worker pool declares "+probe.Feature+": no update can be rejected")
		return
	}

	It(fmt.Sprintf("with %s on one of %d apiservers, an update needing %s of a pod on %s is admitted by that apiserver alone, a share of %d such updates through the load balancer is admitted, and none once the apiservers agree again", describeArgs(validatorOff), t.ControlPlaneCount(), probe.Feature, framework.PoolDesc(lacking), haAttempts), func(ctx SpecContext) {
		apiservers := e.APIServers(ctx)
		ns := e.Namespace(ctx, "ha")
		pod := e.StartedPod(ctx, ns, "resize", lacking, probe.Apply, probe.Started)
		attempt := 0
		update := func(cs kubernetes.Interface) probes.UpdateResult {
			GinkgoHelper()
			attempt++
			res, err := probes.Update(ctx, cs, ns, pod.Name, probe.Subresource, probe.Repeat(attempt))
			Expect(err).NotTo(HaveOccurred())
			return res
		}
		rejected := func(res probes.UpdateResult) bool {
			return res.Code == http.StatusForbidden && res.Message == fixtures.UpdateRejection(pod.Name, probe.Feature, pod.Spec.NodeName)
		}
		// throughBalancer sends n updates, each on a connection of its own,
		// and counts those admitted; any other answer than 200 or the
		// validator's 403 fails the spec.
		balanced, err := framework.OneConnectionPerRequest(e.Cluster.Client.RESTConfig())
		Expect(err).NotTo(HaveOccurred())
		throughBalancer := func(n int) int {
			GinkgoHelper()
			admitted := 0
			for range n {
				cs, err := kubernetes.NewForConfig(balanced)
				Expect(err).NotTo(HaveOccurred())
				res := update(cs)
				Expect(res.Code == http.StatusOK || rejected(res)).To(BeTrue(), "through the load balancer: %d %s", res.Code, res.Message)
				if res.Code == http.StatusOK {
					admitted++
				}
			}
			return admitted
		}
		expectAnswers := func(off string) {
			GinkgoHelper()
			for _, a := range apiservers {
				res := update(a.Clientset(e))
				if a.Node == off {
					Expect(res.Code).To(BeEquivalentTo(http.StatusOK), "apiserver on %s (validator off): %d %s", a.Node, res.Code, res.Message)
					continue
				}
				Expect(rejected(res)).To(BeTrue(), "apiserver on %s (validator on) answered %d %s", a.Node, res.Code, res.Message)
			}
		}

		By(fmt.Sprintf("all %d apiservers agree: each rejects the update, and none of %d through the load balancer is admitted", len(apiservers), haAttempts))
		expectAnswers("")
		Expect(throughBalancer(haAttempts)).To(BeZero(), "updates admitted through the load balancer while every apiserver validates")

		changed := apiservers[len(apiservers)-1]
		By(fmt.Sprintf("the apiserver on %s restarts with %s; the others keep running", changed.Node, describeArgs(validatorOff)))
		validatorOn := map[string]string{"disable-admission-plugins": ""}
		disagree := true // restored once, by the last step or the cleanup: a rewrite that changes nothing restarts nothing
		e.SetAPIServerAt(ctx, changed, t.APIServer(), validatorOff)
		DeferCleanup(func(ctx SpecContext) {
			if disagree {
				e.SetAPIServerAt(ctx, changed, t.APIServer(), validatorOn)
			}
		}, NodeTimeout(4*time.Minute))

		By("each apiserver answers by its own settings")
		expectAnswers(changed.Node)

		By("through the load balancer: once it routes to the changed apiserver (the first update admitted), a share of the next updates is admitted")
		Expect(wait.Until(ctx, wait.API, "the load balancer to route an update to "+changed.Node, func(context.Context) (bool, string, error) {
			return throughBalancer(1) == 1, "rejected", nil
		})).To(Succeed())
		admitted := throughBalancer(haAttempts)
		framework.Record(report.Observation{Kind: report.KindMeasure, Pool: lacking.Name, Node: pod.Spec.NodeName, Feature: probe.Feature,
			Text: fmt.Sprintf("HA window: with %s on 1 of %d apiservers, %d of %d updates needing %s through the load balancer were admitted", describeArgs(validatorOff), len(apiservers), admitted, haAttempts, probe.Feature)})
		Expect(admitted).To(And(BeNumerically(">", 0), BeNumerically("<", haAttempts)), "updates admitted through the load balancer while one apiserver of %d runs without the validator", len(apiservers))

		By("the apiserver rolls forward: every apiserver rejects the update again, and none through the load balancer is admitted")
		e.SetAPIServerAt(ctx, changed, t.APIServer(), validatorOn)
		disagree = false
		expectAnswers("")
		Expect(throughBalancer(haAttempts)).To(BeZero(), "updates admitted through the load balancer once the apiservers agree")
	})
}

// oneAPIServer is why the HA claims do not apply to a single control-plane node.
const oneAPIServer = "the topology has one control-plane node: one apiserver answers every request"

// HAProbeSpecInput is the input of HAProbeSpec.
type HAProbeSpecInput struct{ framework.SpecInput }

// HAProbeSpec rolls NodeDeclaredFeatures back on one apiserver of an HA
// control plane: ndfq probe, which reads every apiserver at its own
// address, must hold gate-fingerprint naming it, and say GO once the
// apiservers agree again.
func HAProbeSpec(_ context.Context, inputGetter func() HAProbeSpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("HAProbeSpec"); e = in.Env })

	const claim = "while one apiserver of an HA control plane has NodeDeclaredFeatures rolled back, ndfq probe reads every apiserver and holds gate-fingerprint naming it; once they agree it says GO"
	api, okRollback := t.APIServer().Rollback()
	switch {
	case t.ControlPlaneCount() < 2:
		notApplicable(claim, oneAPIServer)
		return
	case !okRollback:
		notApplicable(claim, fmt.Sprintf("kube-apiserver %s has NodeDeclaredFeatures locked on, and so has the minor it may emulate: no apiserver can disagree on it", t.ControlPlaneVersion()))
		return
	}
	It(fmt.Sprintf("with kube-apiserver %s on one of %d apiservers, ndfq probe reads each apiserver at its own address and holds gate-fingerprint naming that one; once they agree it says GO", describeRollback(api), t.ControlPlaneCount()), func(ctx SpecContext) {
		apiservers := e.APIServers(ctx)
		changed := apiservers[len(apiservers)-1]
		By("all apiservers agree: GO")
		code, g := e.ProbeVerdict(ctx)
		Expect(code).To(Equal(0), "%s %v %v", g.Outcome, g.Reasons, g.Unchecked)

		By(fmt.Sprintf("the apiserver on %s rolls back: %s", changed.Node, describeRollback(api)))
		rolledBack := true // restored once, by the last step or the cleanup
		e.SetAPIServerAt(ctx, changed, api.Applied(t.APIServer()), nil)
		DeferCleanup(func(ctx SpecContext) {
			if rolledBack {
				e.SetAPIServerAt(ctx, changed, t.APIServer(), nil)
			}
		}, NodeTimeout(4*time.Minute))
		code, g = e.ProbeVerdict(ctx)
		Expect(code).To(Equal(1), "%s %v %v", g.Outcome, g.Reasons, g.Unchecked)
		i := slices.IndexFunc(g.Reasons, func(r verdict.Reason) bool {
			return r.Condition == verdict.GateFingerprint && strings.Contains(r.Detail, fixtures.NodeDeclaredFeatures+": ") && strings.Contains(r.Detail, changed.Endpoint)
		})
		Expect(i).NotTo(BeNumerically("<", 0), "a gate-fingerprint reason naming %s at %s: %v", fixtures.NodeDeclaredFeatures, changed.Endpoint, g.Reasons)
		framework.Record(report.Observation{Kind: report.KindMeasure, Pool: "control-plane", Node: changed.Node,
			Text: fmt.Sprintf("HA window: ndfq probe with one apiserver rolled back held %v", g.Fired())})

		By("the apiserver rolls forward: GO")
		e.SetAPIServerAt(ctx, changed, t.APIServer(), nil)
		rolledBack = false
		code, g = e.ProbeVerdict(ctx)
		Expect(code).To(Equal(0), "%s %v %v", g.Outcome, g.Reasons, g.Unchecked)
	})
}

// repeatableUpdate is the first update probe that can be repeated and whose
// feature the apiserver infers.
func repeatableUpdate(api fixtures.Component) (fixtures.FeatureUpdate, bool) {
	for _, u := range fixtures.FeatureUpdates(api.GateMinor()) {
		if u.Repeat != nil && api.Enables(u.APIServerGate) && api.Enables(fixtures.NodeDeclaredFeatures) {
			return u, true
		}
	}
	return fixtures.FeatureUpdate{}, false
}

func describeArgs(args map[string]string) string {
	var s []string
	for k, v := range args {
		s = append(s, "--"+k+"="+v)
	}
	slices.Sort(s)
	return fmt.Sprint(s)
}
