//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/report"
	"github.com/ndfq/ndfq/report/rollout"
)

// ProbeCLISpecInput is the input of ProbeCLISpec.
type ProbeCLISpecInput struct{ framework.SpecInput }

// ProbeCLISpec runs the real ndfq binary as a rollout gate: GO on the sound
// cluster, HOLD naming the node once a declaration is forged or a kubelet
// stops, and nothing needed beyond config/rbac/probe.yaml.
func ProbeCLISpec(_ context.Context, inputGetter func() ProbeCLISpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("ProbeCLISpec"); e = in.Env })

	It("says GO (exit 0) with a per-pool table on the sound cluster", func(ctx SpecContext) {
		code, out := e.ProbeCLI(ctx)
		Expect(code).To(Equal(0), "probe verdict:\n%s", out)
		Expect(out).To(HavePrefix(rollout.GO))
		for _, p := range t.Pools() {
			Expect(out).To(ContainSubstring(p.Name), "per-pool table")
		}
		code, js := e.ProbeCLI(ctx, "--output", "json")
		Expect(code).To(Equal(0))
		Expect(rollout.ValidateProbeJSON([]byte(js))).To(Succeed(), "--output json against report/rollout/probe.schema.json")
	})

	if silent, ok := framework.PoolWhere(t.Pools(), framework.Silent); ok {
		It(fmt.Sprintf("says HOLD (exit 1) naming the node after a declaration is forged on %s", framework.PoolDesc(silent)), disruptive, func(ctx SpecContext) {
			node, _ := e.PoolNode(ctx, silent)
			Expect(e.PatchDeclared(ctx, node, []string{restartAll})).To(Succeed())
			DeferCleanup(func(ctx SpecContext) { Expect(e.PatchDeclared(ctx, node, nil)).To(Succeed()) })
			e.ExpectHold(ctx, rollout.DeclaredButNotEnabled, silent.Name, node)
			framework.Record(report.Observation{Kind: report.KindMeasure, Text: "ndfq probe held on a forged declaration on " + node})
		})
	}

	It("needs nothing beyond config/rbac/probe.yaml: GO as an identity bound only to it, exit 2 naming the verb without it", func(ctx SpecContext) {
		data, err := os.ReadFile(filepath.Join("..", "config", "rbac", "probe.yaml"))
		Expect(err).NotTo(HaveOccurred())
		docs := strings.Split(string(data), "\n---\n")
		Expect(docs).To(HaveLen(2))
		var role rbacv1.ClusterRole
		var binding rbacv1.ClusterRoleBinding
		Expect(yaml.UnmarshalStrict([]byte(docs[0]), &role)).To(Succeed())
		Expect(yaml.UnmarshalStrict([]byte(docs[1]), &binding)).To(Succeed())
		Expect(binding.Subjects).To(HaveLen(1))
		_, err = e.Clientset.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) {
			_ = e.Clientset.RbacV1().ClusterRoles().Delete(ctx, role.Name, metav1.DeleteOptions{})
		})
		_, err = e.Clientset.RbacV1().ClusterRoleBindings().Create(ctx, &binding, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) {
			_ = e.Clientset.RbacV1().ClusterRoleBindings().Delete(ctx, binding.Name, metav1.DeleteOptions{})
		})

		code, out := e.ProbeCLI(ctx, "--as", binding.Subjects[0].Name)
		Expect(code).To(Equal(0), "probe as %s:\n%s", binding.Subjects[0].Name, out)
		Expect(out).To(HavePrefix(rollout.GO))
		code, _ = e.ProbeCLI(ctx, "--as", "ndfq-nobody")
		Expect(code).To(Equal(2), "an identity without the role must be an error, not a verdict")
	})

	oldest := framework.OldestPool(t.Workers)
	It(fmt.Sprintf("says HOLD (exit 1) naming the node after the kubelet of %s is stopped", framework.PoolDesc(oldest)), disruptive, func(ctx SpecContext) {
		name, node := e.PoolNode(ctx, oldest)
		Expect(surgery.StopKubelet(node)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(surgery.StartKubelet(node)).To(Succeed())
			Expect(e.Cluster.WaitNodesReady(ctx)).To(Succeed())
		})
		e.WaitNodeReady(ctx, name, false)
		e.ExpectHold(ctx, rollout.StaleDeclarations, oldest.Name, name, "--freshness", "30s")
	})
}
