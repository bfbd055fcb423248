package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/wait"
	"github.com/ndfq/ndfq/probes"
)

// PoolDeclarations reads the pool's declarations, each checked by the
// probe against the oracle for the gates its kubelet reports; every
// placement and update claim stands on them.
func (e *Env) PoolDeclarations(ctx context.Context, pool topology.Pool) []probes.Declaration {
	GinkgoHelper()
	// Only the pool's kubelets are asked (each costs two proxied requests).
	out, err := probes.Declarations(ctx, probes.DeclarationsInput{Clientset: e.Clientset, PoolLabel: topology.PoolLabel,
		Nodes: e.NodesOfPool(ctx, pool.Name), Runtimes: e.criReports()})
	Expect(err).NotTo(HaveOccurred())
	Expect(out).To(HaveLen(pool.Count), "nodes of pool %s", pool.Name)
	for _, d := range out {
		Expect(d.Unreachable).To(BeEmpty(), "kubelet on %s (pool %s)", d.Node, pool.Name)
	}
	return out
}

// CRIReport is what the node's runtime reports over the CRI (crictl info),
// read once per suite process: nothing in the suites restarts a runtime.
func (e *Env) CRIReport(node string) fixtures.Runtime {
	GinkgoHelper()
	rt, ok := e.criReports()[node]
	Expect(ok).To(BeTrue(), "no CRI report of node %s: %v", node, e.criErr)
	return rt
}

// criReports reads every node's CRI report on first use.
func (e *Env) criReports() map[string]fixtures.Runtime {
	e.criOnce.Do(func() {
		e.cri = map[string]fixtures.Runtime{}
		list, err := e.Cluster.Provider.ListInternalNodes(e.Cluster.Name)
		if err != nil {
			e.criErr = err
			return
		}
		for _, n := range list {
			rt, err := surgery.CRIReport(n)
			if err != nil {
				e.criErr = err
				continue
			}
			e.cri[n.String()] = rt
		}
	})
	return e.cri
}

// DescribeRuntime says which CRI features a runtime reports.
func DescribeRuntime(rt fixtures.Runtime) string {
	if on := rt.Reported(); len(on) > 0 {
		return strings.Join(on, ", ")
	}
	return "no runtime features and no user namespaces"
}

// ExpectPoolDeclares is the precondition of placement and update claims:
// the pool's nodes declare feature exactly when the oracle says so.
func (e *Env) ExpectPoolDeclares(ctx context.Context, pool topology.Pool, feature string, declares bool) {
	GinkgoHelper()
	for _, d := range e.PoolDeclarations(ctx, pool) {
		Expect(slices.Contains(d.Declared, feature)).To(Equal(declares), "precondition: node %s of %s declares %v", d.Node, pool.Name, d.Declared)
	}
}

// NodesOfPool lists the Node objects labelled with the pool.
func (e *Env) NodesOfPool(ctx context.Context, pool string) []corev1.Node {
	GinkgoHelper()
	list, err := e.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: topology.PoolLabel + "=" + pool})
	Expect(err).NotTo(HaveOccurred())
	return list.Items
}

// NodeOutsidePool is the name of a node of another pool.
func (e *Env) NodeOutsidePool(ctx context.Context, pool string) string {
	GinkgoHelper()
	list, err := e.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: topology.PoolLabel + "," + topology.PoolLabel + "!=" + pool})
	Expect(err).NotTo(HaveOccurred())
	Expect(list.Items).NotTo(BeEmpty(), "no node outside pool %s", pool)
	return list.Items[0].Name
}

// PoolNode is the pool's first node by name and its kind container; the
// spec's failure evidence will hold that node's kubelet journal.
func (e *Env) PoolNode(ctx context.Context, pool topology.Pool) (string, nodes.Node) {
	GinkgoHelper()
	name := e.PoolDeclarations(ctx, pool)[0].Node
	node, err := e.Cluster.KindNode(name)
	Expect(err).NotTo(HaveOccurred())
	e.evidence.node(name)
	return name, node
}

// Node reads a Node object.
func (e *Env) Node(ctx context.Context, name string) *corev1.Node {
	GinkgoHelper()
	n, err := e.Clientset.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	return n
}

// DeclaredOf is the node's status.declaredFeatures as stored.
func (e *Env) DeclaredOf(ctx context.Context, node string) []string {
	GinkgoHelper()
	return e.Node(ctx, node).Status.DeclaredFeatures
}

// PatchDeclared writes status.declaredFeatures as a forger (or an
// operator clearing stale declarations) would; nil clears it.
func (e *Env) PatchDeclared(ctx context.Context, node string, list any) error {
	return PatchDeclared(ctx, e.Clientset, node, list)
}

// PatchDeclared is Env.PatchDeclared through any client (a second cluster's).
func PatchDeclared(ctx context.Context, cs kubernetes.Interface, node string, list any) error {
	body, _ := json.Marshal(map[string]any{"status": map[string]any{"declaredFeatures": list}})
	_, err := cs.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, body, metav1.PatchOptions{}, "status")
	return err
}

// WaitKubelet waits until the node's kubelet runs version (if given), is
// Ready, and reports every gate in gates as set: a restart is done when
// the node says so, never after a sleep.
func (e *Env) WaitKubelet(ctx context.Context, name, version string, gates map[string]bool) {
	GinkgoHelper()
	runs := version
	if runs == "" {
		runs = "its version"
	}
	Expect(wait.Until(ctx, wait.KubeletSync, fmt.Sprintf("kubelet on %s to run %s with %s", name, runs, surgery.FormatGatesOrNone(gates)), func(ctx context.Context) (bool, string, error) {
		n, err := e.Clientset.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		if version != "" && n.Status.NodeInfo.KubeletVersion != version {
			return false, "kubelet version " + n.Status.NodeInfo.KubeletVersion, nil
		}
		if !wait.NodeReady(*n) {
			return false, "not Ready", nil
		}
		reported, err := probes.KubeletGates(ctx, e.Clientset, name)
		if err != nil {
			return false, err.Error(), nil
		}
		for g, want := range gates {
			if reported.Known(g) && reported.Enabled(g) != want {
				return false, fmt.Sprintf("%s=%t", g, reported.Enabled(g)), nil
			}
		}
		return true, "", nil
	})).To(Succeed())
}

// WaitDeclared waits until the node's status.declaredFeatures is want.
func (e *Env) WaitDeclared(ctx context.Context, name string, want []string) {
	GinkgoHelper()
	want = SortedCopy(want)
	Expect(wait.Until(ctx, wait.KubeletSync, fmt.Sprintf("%s to declare %s", name, DescribeSet(want)), func(ctx context.Context) (bool, string, error) {
		n, err := e.Clientset.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		got := SortedCopy(n.Status.DeclaredFeatures)
		return slices.Equal(got, want), "declares " + DescribeSet(got), nil
	})).To(Succeed())
}

// WaitLeaseRenewals waits until the node's lease is renewed n times: the
// kubelet was alive and had its chances to update the node's status.
func (e *Env) WaitLeaseRenewals(ctx context.Context, name string, n int) {
	GinkgoHelper()
	var last time.Time
	seen := 0
	Expect(wait.Until(ctx, wait.KubeletSync, fmt.Sprintf("%d lease renewals of %s", n, name), func(ctx context.Context) (bool, string, error) {
		l, err := e.Clientset.CoordinationV1().Leases("kube-node-lease").Get(ctx, name, metav1.GetOptions{})
		if err != nil || l.Spec.RenewTime == nil {
			return false, fmt.Sprint(err), nil
		}
		if t := l.Spec.RenewTime.Time; !t.Equal(last) {
			if !last.IsZero() {
				seen++
			}
			last = t
		}
		return seen >= n, fmt.Sprintf("%d renewals", seen), nil
	})).To(Succeed())
}

// LeaseRenewed is when the node's kubelet last renewed its lease.
func (e *Env) LeaseRenewed(ctx context.Context, name string) time.Time {
	GinkgoHelper()
	l, err := e.Clientset.CoordinationV1().Leases("kube-node-lease").Get(ctx, name, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred(), "the lease of %s", name)
	Expect(l.Spec.RenewTime).NotTo(BeNil(), "the lease of %s was never renewed", name)
	return l.Spec.RenewTime.Time
}

// WaitNodeReady waits until the node's Ready condition is ready.
func (e *Env) WaitNodeReady(ctx context.Context, name string, ready bool) {
	GinkgoHelper()
	Expect(wait.Until(ctx, wait.Nodes, fmt.Sprintf("%s Ready=%t", name, ready), func(ctx context.Context) (bool, string, error) {
		n, err := e.Clientset.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return wait.NodeReady(*n) == ready, fmt.Sprintf("Ready=%t", wait.NodeReady(*n)), nil
	})).To(Succeed())
}

// WaitNodesSettled waits (wait-nodes) until every node's kubelet has
// renewed its lease after since and the node is Ready and free of the node
// lifecycle controller's NotReady/unreachable taints: an apiserver
// restarted on a loaded host can leave leases unrenewed long enough for the
// controller to taint nodes it then clears, and a node not tainted yet is
// not settled until its kubelet is heard from again. It returns the nodes
// that were not settled at first, for the spec to record.
func (e *Env) WaitNodesSettled(ctx context.Context, since time.Time) []string {
	GinkgoHelper()
	var first []string
	checked := false
	Expect(wait.Until(ctx, wait.Nodes, "every node's lease renewed since "+since.Format(time.TimeOnly)+", Ready and untainted by the node lifecycle controller", func(ctx context.Context) (bool, string, error) {
		list, err := e.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		leases, err := e.Clientset.CoordinationV1().Leases(corev1.NamespaceNodeLease).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		renewed := map[string]bool{}
		for _, l := range leases.Items {
			renewed[l.Name] = l.Spec.RenewTime != nil && l.Spec.RenewTime.After(since)
		}
		var unsettled, unheard []string
		for _, n := range list.Items {
			tainted := slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool {
				return t.Key == corev1.TaintNodeUnreachable || t.Key == corev1.TaintNodeNotReady
			})
			switch {
			case !wait.NodeReady(n) || tainted:
				unsettled = append(unsettled, n.Name)
			case !renewed[n.Name]:
				unheard = append(unheard, n.Name)
			}
		}
		if !checked {
			first, checked = unsettled, true
		}
		return len(unsettled)+len(unheard) == 0, fmt.Sprintf("NotReady or tainted: %v; lease not renewed since: %v", unsettled, unheard), nil
	})).To(Succeed())
	return first
}

// ReadGates reads a component's gates, retrying (wait-metrics) while its
// metrics endpoint is not answering yet.
func ReadGates(ctx context.Context, what string, read func(context.Context) (probes.Gates, error)) probes.Gates {
	GinkgoHelper()
	var gates probes.Gates
	Expect(wait.Until(ctx, wait.Metrics, what+" metrics", func(ctx context.Context) (bool, string, error) {
		g, err := read(ctx)
		if err != nil {
			return false, err.Error(), nil
		}
		gates = g
		return true, "", nil
	})).To(Succeed())
	return gates
}

// SortedCopy is a sorted copy, [] for nil, to compare declared sets.
func SortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	if out == nil {
		out = []string{}
	}
	return out
}

// PoolOf is the pool label of a node.
func (e *Env) PoolOf(ctx context.Context, node string) string {
	GinkgoHelper()
	n, err := e.Clientset.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	return n.Labels[topology.PoolLabel]
}
