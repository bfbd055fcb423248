//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/internal/poll"
	"github.com/ndfq/ndfq/probes"
	"github.com/ndfq/ndfq/report"
)

// ndfqProbe runs the real ndfq binary's probe against the cluster under test.
func ndfqProbe(ctx SpecContext, args ...string) (int, string) {
	bin := os.Getenv("NDFQ_BIN")
	if bin == "" {
		bin, _ = filepath.Abs(filepath.Join("..", "bin", "ndfq"))
	}
	args = append([]string{"probe", "--kubeconfig", env.Shared.Kubeconfig, "--scheduler-metrics-url", env.Shared.SchedulerMetricURL}, args...)
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else {
		Expect(err).NotTo(HaveOccurred(), "run %s", bin)
	}
	GinkgoWriter.Printf("ndfq %s -> exit %d\n%s\n%s\n", strings.Join(args, " "), code, out.String(), stderr.String())
	return code, out.String()
}

var _ = Describe("The ndfq probe CLI as a rollout gate", ndf, Label("cli"), Serial, func() {
	It("says GO (exit 0) with a per-pool table on the sound cluster", func(ctx SpecContext) {
		code, out := ndfqProbe(ctx)
		Expect(code).To(Equal(0), "probe verdict:\n%s", out)
		Expect(out).To(HavePrefix("GO"))
		for _, p := range poolsOf(suiteTopology) {
			Expect(out).To(ContainSubstring(p.Name), "per-pool table")
		}
		code, js := ndfqProbe(ctx, "--output", "json")
		Expect(code).To(Equal(0))
		Expect(report.ValidateProbeJSON([]byte(js))).To(Succeed(), "--output json against report/probe.schema.json")
	})

	if silent, ok := firstPool(func(p topology.Pool) bool { return !kubeletPublishes(p) }); ok {
		It(fmt.Sprintf("says HOLD (exit 1) naming the node after a declaration is forged on %s", poolDesc(silent)), func(ctx SpecContext) {
			node := declarationsOfPool(ctx, silent)[0].Node
			Expect(patchDeclared(ctx, node, []string{"RestartAllContainersOnContainerExits"})).To(Succeed())
			DeferCleanup(func(ctx SpecContext) { Expect(patchDeclared(ctx, node, nil)).To(Succeed()) })
			code, out := ndfqProbe(ctx)
			Expect(code).To(Equal(1), "probe verdict:\n%s", out)
			Expect(out).To(ContainSubstring("HOLD: declared-but-not-enabled [%s/%s]", silent.Name, node))
			record(report.Observation{Kind: report.KindMeasure, Text: "ndfq probe held on a forged declaration on " + node})
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
		_, err = env.Clientset.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) {
			_ = env.Clientset.RbacV1().ClusterRoles().Delete(ctx, role.Name, metav1.DeleteOptions{})
		})
		_, err = env.Clientset.RbacV1().ClusterRoleBindings().Create(ctx, &binding, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) {
			_ = env.Clientset.RbacV1().ClusterRoleBindings().Delete(ctx, binding.Name, metav1.DeleteOptions{})
		})

		code, out := ndfqProbe(ctx, "--as", binding.Subjects[0].Name)
		Expect(code).To(Equal(0), "probe as %s:\n%s", binding.Subjects[0].Name, out)
		Expect(out).To(HavePrefix("GO"))
		code, _ = ndfqProbe(ctx, "--as", "ndfq-nobody")
		Expect(code).To(Equal(2), "an identity without the role must be an error, not a verdict")
	})

	legacy := poolsOf(suiteTopology)[len(poolsOf(suiteTopology))-1]
	It(fmt.Sprintf("says HOLD (exit 1) naming the node after the kubelet of %s is stopped", poolDesc(legacy)), func(ctx SpecContext) {
		name := declarationsOfPool(ctx, legacy)[0].Node
		node, err := env.Cluster.KindNode(name)
		Expect(err).NotTo(HaveOccurred())
		Expect(surgery.StopKubelet(node)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(surgery.StartKubelet(node)).To(Succeed())
			Expect(env.Cluster.WaitNodesReady(ctx)).To(Succeed())
		})
		Expect(poll.Until(ctx, "wait-nodes", name+" to stop being Ready", func(ctx context.Context) (bool, string, error) {
			n, err := env.Clientset.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			return !probes.NodeReady(*n), "still Ready", nil
		})).To(Succeed())
		code, out := ndfqProbe(ctx, "--freshness", "30s")
		Expect(code).To(Equal(1), "probe verdict:\n%s", out)
		Expect(out).To(ContainSubstring("HOLD: stale-declarations [%s/%s]", legacy.Name, name))
	})
})
