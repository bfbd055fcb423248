//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/internal/wait"
	"github.com/ndfq/ndfq/verdict"
)

// RuntimeUpgradeSpecInput is the input of RuntimeUpgradeSpec.
type RuntimeUpgradeSpecInput struct{ framework.SpecInput }

// RuntimeUpgradeSpec upgrades one node's containerd in place under its
// running kubelet, as a package upgrade does: the kubelet reads runtime
// features once, at start (kubernetes/kubernetes#138099), so the node
// keeps its declarations while it reports the new runtime, the probe
// holds on that window, and a kubelet restart makes them right.
func RuntimeUpgradeSpec(_ context.Context, inputGetter func() RuntimeUpgradeSpecInput) {
	t := inputGetter().Topology
	plan, why := claims.PlanRuntimeUpgrade(t)
	text := "a node whose containerd is upgraded in place under its running kubelet"
	if why != "" {
		BeforeEach(func() { inputGetter().Check("RuntimeUpgradeSpec") })
		notApplicable(text, why)
		return
	}
	cell := claims.Find(claims.Matrix(t), claims.RuntimeUpgrade, plan.Subject.Name, plan.Feature)
	text = fmt.Sprintf("a node of %s (%s on) whose containerd is upgraded in place to %s under its running kubelet keeps its declarations without %s, and the probe holds missing-report, until the kubelet restarts; then it declares it",
		framework.PoolDesc(plan.Subject), plan.Gate, plan.To.Name, plan.Feature)
	cellIt(cell, text, func(ctx SpecContext) {
		in := inputGetter()
		in.Check("RuntimeUpgradeSpec")
		e, subject := in.Env, plan.Subject
		name, node := e.PoolNode(ctx, subject)
		fromName, fromNode := e.PoolNode(ctx, plan.From)
		original := e.Node(ctx, name).Status.NodeInfo.ContainerRuntimeVersion
		DeferCleanup(func(ctx SpecContext) {
			By("restoring " + name + "'s runtime and kubelet gates as the topology has them")
			Expect(surgery.RestoreRuntime(node)).To(Succeed())
			waitRuntimeVersion(ctx, e, name, original)
			e.RestoreKubelet(ctx, subject, name, node, false)
		}, NodeTimeout(4*time.Minute))

		By(fmt.Sprintf("turning %s on in %s's kubelet: on %s it must not declare %s", plan.Gate, name, original, plan.Feature))
		_, err := surgery.SetKubeletGates(node, plan.Before.Gates)
		Expect(err).NotTo(HaveOccurred())
		e.WaitKubelet(ctx, name, "", plan.Before.Gates)
		before := plan.Before.MustDeclare()
		e.WaitDeclared(ctx, name, before)

		By(fmt.Sprintf("replacing containerd on %s with %s's (%s) and restarting containerd only", name, fromName, plan.To.Name))
		Expect(surgery.UpgradeRuntime(node, fromNode, plan.To.Name)).To(Succeed())
		waitRuntimeVersion(ctx, e, name, plan.To.Version)
		rt, err := surgery.CRIReport(node)
		Expect(err).NotTo(HaveOccurred())
		Expect(rt).To(Equal(plan.To.Reports), "what %s's CRI reports after the upgrade", name)

		By(fmt.Sprintf("watching %s's declarations for %s while its kubelet runs on %s", name, wait.MustGet(wait.RuntimeStale).Timeout, plan.To.Version))
		var changed []string
		// No assertion inside the window: its last Get may meet the window's own end.
		_, err = wait.Watch(ctx, wait.RuntimeStale, name+"'s declarations", func(ctx context.Context) error {
			n, err := e.Clientset.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if got := framework.SortedCopy(n.Status.DeclaredFeatures); changed == nil && !slices.Equal(got, before) {
				changed = got
			}
			return nil
		})
		Expect(err).NotTo(HaveOccurred())
		code, g := e.ProbeVerdictOn(ctx, []string{subject.Name})
		held := g.Holds(verdict.MissingReport, subject.Name, name) && slices.ContainsFunc(g.Reasons, func(r verdict.Reason) bool {
			return r.Condition == verdict.MissingReport && strings.Contains(r.Detail, plan.Feature)
		})

		By("restarting " + name + "'s kubelet")
		Expect(surgery.RestartKubelet(node)).To(Succeed())
		e.WaitDeclared(ctx, name, plan.After.MustDeclare())
		afterCode, afterVerdict := e.ProbeVerdictOn(ctx, []string{subject.Name})

		seen := claims.StaleUntilRestart
		switch {
		case changed != nil:
			seen = "declared " + framework.DescribeSet(changed) + " before the kubelet restarted"
		case !held:
			seen = fmt.Sprintf("stale, but the probe said %s %v", g.Outcome, g.Reasons)
		case len(afterVerdict.Reasons) > 0:
			seen = fmt.Sprintf("stale, but after the kubelet restarted the probe said %s %v", afterVerdict.Outcome, afterVerdict.Reasons)
		}
		framework.RecordCell(cell, name, seen, fmt.Sprintf("%s on %s: declared %s for %s, the probe exit %d; after a kubelet restart %s, the probe exit %d",
			plan.To.Version, name, framework.DescribeSet(before), wait.MustGet(wait.RuntimeStale).Timeout, code, framework.DescribeSet(plan.After.MustDeclare()), afterCode))
		Expect(changed).To(BeNil(), "%s's declarations changed while its kubelet ran on the upgraded runtime: the kubelet now rediscovers runtime features (kubernetes/kubernetes#138099 fixed?); the claim must change", name)
		Expect(code).To(Equal(1), "probe verdict %s: %v", g.Outcome, g.Reasons)
		Expect(held).To(BeTrue(), "the probe should hold missing-report naming %s on %s; it said %s %v", plan.Feature, name, g.Outcome, g.Reasons)
		Expect(afterVerdict.Reasons).To(BeEmpty(), "after the kubelet restarted on %s", plan.To.Version)
	}, SpecTimeout(8*time.Minute))
}

// waitRuntimeVersion waits until the node reports version as its runtime.
func waitRuntimeVersion(ctx context.Context, e *framework.Env, name, version string) {
	GinkgoHelper()
	Expect(wait.Until(ctx, wait.KubeletSync, name+" to report "+version, func(ctx context.Context) (bool, string, error) {
		n, err := e.Clientset.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return n.Status.NodeInfo.ContainerRuntimeVersion == version, "reports " + n.Status.NodeInfo.ContainerRuntimeVersion, nil
	})).To(Succeed())
}
