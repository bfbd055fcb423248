//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/poll"
	"github.com/ndfq/ndfq/probes"
	"github.com/ndfq/ndfq/report"
)

// forgedName is well formed, so validation stores it, and no registry has it.
const forgedName = "NdfqForgedFeature"

func patchDeclared(ctx SpecContext, node string, list any) error {
	body, _ := json.Marshal(map[string]any{"status": map[string]any{"declaredFeatures": list}})
	_, err := env.Clientset.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, body, metav1.PatchOptions{}, "status")
	return err
}

func declaredOf(ctx SpecContext, node string) []string {
	n, err := env.Clientset.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	return n.Status.DeclaredFeatures
}

// firstPool is the first pool matching pred, for specs that need one such pool.
func firstPool(pred func(topology.Pool) bool) (topology.Pool, bool) {
	for _, p := range poolsOf(suiteTopology) {
		if pred(p) {
			return p, true
		}
	}
	return topology.Pool{}, false
}

var _ = Describe("Declarations are facts, not labels or forgeries", ndf, Label("forgery"), Serial, func() {
	for _, probe := range fixtures.SchedulingProbes(cpMinor) {
		probe := probe
		lacking, ok := firstPool(func(p topology.Pool) bool { return !slices.Contains(intendedSet(p), probe.Feature) })
		if !ok || !schedulerIntends() || !apiServerIntends(probe.APIServerGate) {
			continue
		}
		It(fmt.Sprintf("a node of %s labelled %s=true, which it does not declare, still refuses a pod that needs it", poolDesc(lacking), probe.Feature), func(ctx SpecContext) {
			node := declarationsOfPool(ctx, lacking)[0].Node
			label := func(ctx context.Context, v any) {
				body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{probe.Feature: v}}})
				_, err := env.Clientset.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, body, metav1.PatchOptions{})
				Expect(err).NotTo(HaveOccurred())
			}
			label(ctx, "true")
			DeferCleanup(func(ctx SpecContext) { label(ctx, nil) })
			ns := specNamespace(ctx, "label")
			pod := fixtures.BasePod("labelled", topology.PoolLabel, lacking.Name)
			probe.Apply(pod)
			res, err := probes.Place(ctx, env.Clientset, ns, pod)
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Node).To(BeEmpty(), "the label made the scheduler bind the pod to %s", res.Node)
			Expect(res.Message).To(ContainSubstring(fixtures.SchedulerRefusal(cpMinor, probe.Feature)))
		})
	}

	It("a ServiceAccount with edit in its namespace gets 403 patching nodes/status", func(ctx SpecContext) {
		ns := specNamespace(ctx, "rbac")
		_, err := env.Clientset.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "editor"}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = env.Clientset.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "editor-edit"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "edit"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "editor", Namespace: ns}},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		cfg := rest.CopyConfig(env.Cluster.Client.RESTConfig())
		cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":editor"}
		editor, err := kubernetes.NewForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		node := declarationsOfPool(ctx, poolsOf(suiteTopology)[1])[0].Node
		body := []byte(`{"status":{"declaredFeatures":["` + forgedName + `"]}}`)
		_, err = editor.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, body, metav1.PatchOptions{}, "status")
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "editor patching nodes/status of %s: %v", node, err)
		Expect(declaredOf(ctx, node)).NotTo(ContainElement(forgedName))
	})

	It("badly formed declaredFeatures lists are refused with 422 and the validation message", func(ctx SpecContext) {
		node := declarationsOfPool(ctx, poolsOf(suiteTopology)[0])[0].Node
		before := declaredOf(ctx, node)
		for _, c := range []struct {
			list []string
			want string
		}{
			{[]string{"lowercase"}, `status.declaredFeatures[0]: Invalid value: "lowercase"`},
			{[]string{"Zeta", "Alpha"}, "list must be sorted alphabetically"},
			{[]string{"Alpha", "Alpha"}, `status.declaredFeatures[1]: Duplicate value: "Alpha"`},
		} {
			err := patchDeclared(ctx, node, c.list)
			Expect(err).To(HaveOccurred(), "%v was stored on %s", c.list, node)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v: %v", c.list, err)
			Expect(err.(apierrors.APIStatus).Status().Code).To(BeEquivalentTo(http.StatusUnprocessableEntity))
			Expect(err.Error()).To(ContainSubstring(c.want))
		}
		Expect(declaredOf(ctx, node)).To(Equal(before), "a refused patch changed %s", node)
	})

	if declaring, ok := firstPool(func(p topology.Pool) bool { return len(intendedSet(p)) > 0 }); ok {
		It(fmt.Sprintf("a well-formed forged name patched into a node of %s is overwritten by its kubelet within its status period", poolDesc(declaring)), func(ctx SpecContext) {
			node := declarationsOfPool(ctx, declaring)[0].Node
			real := declaredOf(ctx, node)
			forged := append(append([]string{}, real...), forgedName)
			sortStrings(forged)
			Expect(patchDeclared(ctx, node, forged)).To(Succeed())
			start := time.Now()
			DeferCleanup(func(ctx SpecContext) { _ = patchDeclared(ctx, node, real) })
			Expect(poll.Until(ctx, "wait-kubelet-sync", "kubelet on "+node+" to overwrite the forgery", func(ctx2 context.Context) (bool, string, error) {
				got := declaredOf(ctx, node)
				return !slices.Contains(got, forgedName), fmt.Sprintf("still %v", got), nil
			})).To(Succeed())
			took := time.Since(start)
			record(report.Observation{Kind: report.KindMeasure, Pool: declaring.Name, Node: node,
				Text: fmt.Sprintf("a forged declaration on %s (%s) was overwritten by its kubelet after %s", node, declaring.Name, took.Round(time.Second))})
			Expect(declaredOf(ctx, node)).To(Equal(real))
		})
	}

	if silent, ok := firstPool(func(p topology.Pool) bool { return !kubeletPublishes(p) }); ok {
		// Finding F2 (docs/findings.md): nothing ever clears it.
		It(fmt.Sprintf("a forged name patched into a node of %s, whose kubelet publishes nothing, stays: the kubelet never clears it (finding F2)", poolDesc(silent)), func(ctx SpecContext) {
			node := declarationsOfPool(ctx, silent)[0].Node
			Expect(patchDeclared(ctx, node, []string{forgedName})).To(Succeed())
			DeferCleanup(func(ctx SpecContext) { Expect(patchDeclared(ctx, node, nil)).To(Succeed()) })
			// Several status periods (10s each) and one lease renewal pass.
			Consistently(func() []string { return declaredOf(ctx, node) }).WithTimeout(35*time.Second).WithPolling(5*time.Second).
				Should(ContainElement(forgedName), "the kubelet on %s cleared the forgery", node)
			record(report.Observation{Kind: report.KindFinding, Pool: silent.Name, Node: node,
				Text: fmt.Sprintf("F2: a forged declaration on a node whose kubelet publishes nothing (%s, %s) is never cleared", silent.Name, silent.PoolVersion())})
		})
	}
})
