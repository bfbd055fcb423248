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

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/wait"
	"github.com/ndfq/ndfq/report"
)

// forgedName is well formed, so validation stores it, and no registry has it.
const forgedName = "NdfqForgedFeature"

// ForgerySpecInput is the input of ForgerySpec.
type ForgerySpecInput struct{ framework.SpecInput }

// ForgerySpec proves declarations are facts from the kubelet: labels do
// not count, RBAC keeps editors out, validation refuses malformed lists,
// and a publishing kubelet overwrites a forgery (a silent one never does:
// finding F2).
func ForgerySpec(_ context.Context, inputGetter func() ForgerySpecInput) {
	t := inputGetter().Topology
	cpMinor := framework.CPMinor(t)
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("ForgerySpec"); e = in.Env })

	for _, probe := range fixtures.FeaturePods(cpMinor) {
		lacking, ok := framework.PoolWhere(t.Pools(), framework.Lacks(probe.Feature))
		claim := "a node labelled " + probe.Feature + "=true, which it does not declare, still refuses a pod that needs it"
		switch why := claims.WhyNoRefusal(t); {
		case !t.APIServer().Enables(probe.APIServerGate):
			notApplicable(claim, "kube-apiserver has "+probe.APIServerGate+" off in this topology: no pod can need "+probe.Feature)
			continue
		case why != "":
			notApplicable(claim, why)
			continue
		case !ok:
			notApplicable(claim, "every pool declares "+probe.Feature)
			continue
		}
		It(fmt.Sprintf("a node of %s labelled %s=true, which it does not declare, still refuses a pod that needs it", framework.PoolDesc(lacking), probe.Feature), disruptive, func(ctx SpecContext) {
			node, _ := e.PoolNode(ctx, lacking)
			label := func(ctx context.Context, v any) {
				body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{probe.Feature: v}}})
				_, err := e.Clientset.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, body, metav1.PatchOptions{})
				Expect(err).NotTo(HaveOccurred())
			}
			label(ctx, "true")
			DeferCleanup(func(ctx SpecContext) { label(ctx, nil) })
			ns := e.Namespace(ctx, "label")
			res := e.Place(ctx, ns, framework.PoolPod("labelled", lacking, probe.Apply))
			Expect(res.Node).To(BeEmpty(), "the label made the scheduler bind the pod to %s", res.Node)
			Expect(res.Message).To(ContainSubstring(fixtures.SchedulerRefusal(cpMinor, probe.Feature)))
		})
	}

	// RBAC and validation do not depend on the node: any worker, and the control plane, serve.
	if target, ok := framework.PoolWhere(t.Workers, framework.Any); ok {
		It("a ServiceAccount with edit in its namespace gets 403 patching nodes/status", func(ctx SpecContext) {
			ns := e.Namespace(ctx, "rbac")
			_, err := e.Clientset.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "editor"}}, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			_, err = e.Clientset.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "editor-edit"},
				RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "edit"},
				Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "editor", Namespace: ns}},
			}, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			cfg := rest.CopyConfig(e.Cluster.Client.RESTConfig())
			cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":editor"}
			editor, err := kubernetes.NewForConfig(cfg)
			Expect(err).NotTo(HaveOccurred())
			node, _ := e.PoolNode(ctx, target)
			body := []byte(`{"status":{"declaredFeatures":["` + forgedName + `"]}}`)
			_, err = editor.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, body, metav1.PatchOptions{}, "status")
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "editor patching nodes/status of %s: %v", node, err)
			Expect(e.DeclaredOf(ctx, node)).NotTo(ContainElement(forgedName))
		})
	}

	if target, ok := framework.PoolWhere(t.Pools(), framework.ControlPlane); ok {
		It("badly formed declaredFeatures lists are refused with 422 and the validation message", func(ctx SpecContext) {
			node, _ := e.PoolNode(ctx, target)
			before := e.DeclaredOf(ctx, node)
			for _, c := range []struct {
				list []string
				want string
			}{
				{[]string{"lowercase"}, `status.declaredFeatures[0]: Invalid value: "lowercase"`},
				{[]string{"Zeta", "Alpha"}, "list must be sorted alphabetically"},
				{[]string{"Alpha", "Alpha"}, `status.declaredFeatures[1]: Duplicate value: "Alpha"`},
			} {
				err := e.PatchDeclared(ctx, node, c.list)
				Expect(err).To(HaveOccurred(), "%v was stored on %s", c.list, node)
				Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v: %v", c.list, err)
				Expect(err.(apierrors.APIStatus).Status().Code).To(BeEquivalentTo(http.StatusUnprocessableEntity))
				Expect(err.Error()).To(ContainSubstring(c.want))
			}
			Expect(e.DeclaredOf(ctx, node)).To(Equal(before), "a refused patch changed %s", node)
		})
	}

	// One pool of each publishing minor: each minor's kubelet must overwrite.
	declaring := framework.PoolsPerMinor(t.Pools(), framework.DeclaresAnything)
	for _, declaring := range declaring {
		It(fmt.Sprintf("a well-formed forged name patched into a node of %s is overwritten by its kubelet within its status period", framework.PoolDesc(declaring)), disruptive, func(ctx SpecContext) {
			node, _ := e.PoolNode(ctx, declaring)
			real := e.DeclaredOf(ctx, node)
			forged := append(slices.Clone(real), forgedName)
			slices.Sort(forged)
			Expect(e.PatchDeclared(ctx, node, forged)).To(Succeed())
			start := time.Now()
			DeferCleanup(func(ctx SpecContext) { _ = e.PatchDeclared(ctx, node, real) })
			Expect(wait.Until(ctx, wait.KubeletSync, "kubelet on "+node+" to overwrite the forgery", func(context.Context) (bool, string, error) {
				got := e.DeclaredOf(ctx, node)
				return !slices.Contains(got, forgedName), fmt.Sprintf("still %v", got), nil
			})).To(Succeed())
			took := time.Since(start)
			framework.Record(report.Observation{Kind: report.KindMeasure, Pool: declaring.Name, Node: node,
				Text: fmt.Sprintf("a forged declaration on %s (%s) was overwritten by its kubelet after %s", node, declaring.Name, took.Round(time.Second))})
			Expect(e.DeclaredOf(ctx, node)).To(Equal(real))
		})
	}
	if len(declaring) == 0 {
		notApplicable("a well-formed forged name patched into a node is overwritten by its kubelet", "no pool's kubelet declares anything in this topology")
	}

	// Finding F2 (docs/findings.md): nothing ever clears it, on a silent
	// kubelet of each minor. Where the scheduler filters, the consequence
	// too: it trusts the forgery and binds a pod that needs the forged
	// feature there.
	forged := []string{forgedName}
	consequence := ""
	if claims.WhyNoRefusal(t) == "" {
		forged = []string{forgedName, restartAll}
		consequence = fmt.Sprintf("; a pod that needs %s is then bound there", restartAll)
	}
	silentPools := framework.PoolsPerMinor(t.Pools(), framework.Silent)
	if len(silentPools) > 0 {
		// One window for every silent pool: the forgeries are patched at
		// once, watched together, and each pool's outcome is its own spec.
		Context("forged on every silent pool at once", Ordered, ContinueOnFailure, func() {
			w := &forgeryWave{pools: silentPools, forged: forged}
			AfterAll(func(ctx SpecContext) { w.restore(ctx) })
			for _, silent := range silentPools {
				It(fmt.Sprintf("forged names patched into a node of %s, whose kubelet publishes nothing, stay: the kubelet never clears them%s (finding F2)", framework.PoolDesc(silent), consequence), disruptive, func(ctx SpecContext) {
					w.ensure(ctx, e)
					node := w.nodes[silent.Name]
					Expect(w.seen[silent.Name]).To(Equal(forged), "the kubelet on %s changed the forgery", node)
					Expect(w.renewed[silent.Name]).To(BeTrue(), "the kubelet on %s renewed no lease while the forgery stayed: no evidence it was alive to clear it", node)
					framework.Record(report.Observation{Kind: report.KindFinding, Pool: silent.Name, Node: node,
						Text: fmt.Sprintf("F2: a forged declaration on a node whose kubelet publishes nothing (%s, %s) is never cleared", silent.Name, silent.PoolVersion())})
					if consequence == "" {
						return
					}
					By("the scheduler trusts the forgery: a pod that needs " + restartAll + " is bound to " + node)
					ns := e.Namespace(ctx, "forged")
					res := e.Place(ctx, ns, framework.PoolPod("trusts-forgery", silent, framework.FeaturePod(t, restartAll).Apply))
					Expect(res.Node).To(Equal(node), "the scheduler refused the forged node: %s", res.Message)
					framework.Record(report.Observation{Kind: report.KindFinding, Pool: silent.Name, Node: node, Feature: restartAll,
						Text: fmt.Sprintf("F2: the scheduler bound a pod that needs %s to %s on a forged declaration its %s kubelet does not honour", restartAll, node, silent.PoolVersion())})
				})
			}
		})
	}
	if len(silentPools) == 0 {
		notApplicable("forged names patched into a node whose kubelet publishes nothing stay", "every pool's kubelet publishes declarations in this topology")
	}
}

// forgeryWave forges the same names on a node of every silent pool and
// watches them all through one window of several status periods.
type forgeryWave struct {
	pools  []topology.Pool
	forged []string
	waveStart
	env     *framework.Env
	nodes   map[string]string   // by pool
	seen    map[string][]string // what a node declared whenever it differed from the forgery, else the forgery
	renewed map[string]bool     // its kubelet renewed its lease during the window
}

func (w *forgeryWave) ensure(ctx SpecContext, e *framework.Env) {
	GinkgoHelper()
	w.once(func() { w.run(ctx, e) }, "forging the silent pools' declarations")
}

// run forges, then watches through watch-forgery's window (several
// status periods and lease renewals): "it never clears them" holds only
// of a kubelet seen alive.
func (w *forgeryWave) run(ctx SpecContext, e *framework.Env) {
	w.env, w.nodes, w.seen, w.renewed = e, map[string]string{}, map[string][]string{}, map[string]bool{}
	renewed := map[string]time.Time{}
	for _, p := range w.pools {
		node, _ := e.PoolNode(ctx, p)
		w.nodes[p.Name] = node
		Expect(e.PatchDeclared(ctx, node, w.forged)).To(Succeed())
		renewed[p.Name] = e.LeaseRenewed(ctx, node)
		w.seen[p.Name] = w.forged
	}
	_, err := wait.Watch(ctx, wait.ForgeryWindow, "the forged nodes' declarations", func(ctx context.Context) error {
		for _, p := range w.pools {
			n, err := e.Clientset.CoreV1().Nodes().Get(ctx, w.nodes[p.Name], metav1.GetOptions{})
			if err != nil {
				return err
			}
			if got := n.Status.DeclaredFeatures; !slices.Equal(got, w.forged) {
				w.seen[p.Name] = got
			}
		}
		return nil
	})
	Expect(err).NotTo(HaveOccurred())
	for _, p := range w.pools {
		w.renewed[p.Name] = e.LeaseRenewed(ctx, w.nodes[p.Name]).After(renewed[p.Name])
	}
}

func (w *forgeryWave) restore(ctx SpecContext) {
	if w.env == nil {
		return
	}
	for _, node := range w.nodes {
		Expect(w.env.PatchDeclared(ctx, node, nil)).To(Succeed())
	}
}
