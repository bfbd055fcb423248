package probes

import (
	"context"
	"slices"
	"strings"
	"testing"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"

	"github.com/ndfq/ndfq/fixtures"
)

// The synthetic node is needed only where no fresh pool lacks a feature
// probed at scheduling (or at update): a fully rolled-out fleet.
func TestSyntheticNeeds(t *testing.T) {
	on := Gates{fixtures.NodeDeclaredFeatures: {Enabled: true}}
	for g := range fixtures.EffectiveGates("1.37", nil) {
		on[g] = GateState{Enabled: true}
	}
	p := &prober{minor: "1.37", api: on, declared: map[string][]string{}}
	var every []string
	for _, sp := range p.schedulingProbes() {
		every = append(every, sp.Feature)
	}
	for _, u := range p.updateProbes() {
		every = append(every, u.Feature)
	}
	p.declared["a1"], p.declared["b1"] = every, every
	pools, fresh := map[string][]string{"a": {"a1"}, "b": {"b1"}}, map[string]bool{"a": true, "b": true}
	if got := p.syntheticNeeds(pools, fresh); !slices.Equal(got, []string{"scheduling", "update"}) {
		t.Errorf("fully rolled out: %v", got)
	}
	p.declared["b1"] = nil // an old pool: it lacks everything
	if got := p.syntheticNeeds(pools, fresh); len(got) != 0 {
		t.Errorf("a pool lacks features: %v", got)
	}
	fresh["b"] = false // its nodes stale: no pod goes there
	if got := p.syntheticNeeds(pools, fresh); len(got) != 2 {
		t.Errorf("the lacking pool is stale: %v", got)
	}
	p.api[fixtures.NodeDeclaredFeatures] = GateState{}
	if got := p.syntheticNeeds(pools, fresh); len(got) != 0 {
		t.Errorf("the apiserver has NodeDeclaredFeatures off, nothing refuses: %v", got)
	}
}

// Without the grant no node is added, and the reason names the grant;
// with it, the node declares nothing and only the run's pods tolerate it.
func TestAddSyntheticNode(t *testing.T) {
	review := func(ok bool) *fake.Clientset {
		cs := fake.NewClientset()
		cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
			rev := a.(k8stesting.CreateAction).GetObject().(*authzv1.SelfSubjectAccessReview)
			rev.Status.Allowed = ok
			return true, rev, nil
		})
		return cs
	}
	p := &prober{cs: review(false), id: "abcde"}
	s, err := p.addSyntheticNode(context.Background(), []string{"scheduling"})
	if err != nil || s.Node != "" || !strings.Contains(s.Unchecked, "config/rbac/synthetic-node.yaml grants it") {
		t.Errorf("no grant: %+v %v", s, err)
	}
	p.cs = review(true)
	s, err = p.addSyntheticNode(context.Background(), []string{"scheduling"})
	if err != nil || s.Node != "ndfq-synthetic-abcde" {
		t.Fatalf("granted: %+v %v", s, err)
	}
	n, err := p.cs.CoreV1().Nodes().Get(context.Background(), s.Node, metav1.GetOptions{})
	if err != nil || len(n.Status.DeclaredFeatures) != 0 || n.Labels[RunLabel] != "abcde" || len(n.Spec.Taints) != 2 || n.Status.Allocatable.Pods().Value() == 0 {
		t.Errorf("node: %+v %v", n, err)
	}
	for _, taint := range n.Spec.Taints {
		if !slices.ContainsFunc(syntheticTolerations("abcde"), func(tol corev1.Toleration) bool { return tol.ToleratesTaint(klog.Background(), &taint, false) }) {
			t.Errorf("the run's pods do not tolerate %v", taint)
		}
		if (&corev1.Toleration{Key: SyntheticTaint, Operator: corev1.TolerationOpEqual, Value: "other", Effect: taint.Effect}).ToleratesTaint(klog.Background(), &taint, false) {
			t.Errorf("another run's pods tolerate %v", taint)
		}
	}
}

// Removal deletes the node, then every pod bound to it at once, and names
// the pods of others (DaemonSets that tolerate every taint).
func TestRemoveSyntheticNode(t *testing.T) {
	on := func(ns, name, node string, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Spec: corev1.PodSpec{NodeName: node}}
	}
	cs := fake.NewClientset(SyntheticNode("ndfq-synthetic-abcde", "abcde"),
		on("ndfq-probe-x", "ndfq-abcde-p-synthetic-node-0", "ndfq-synthetic-abcde", map[string]string{RunLabel: "abcde"}),
		on("kube-system", "kube-proxy-zz9", "ndfq-synthetic-abcde", nil),
		on("kube-system", "kube-proxy-aa1", "worker", nil))
	evicted, err := removeSyntheticNode(context.Background(), cs, "ndfq-synthetic-abcde")
	if err != nil || !slices.Equal(evicted, []string{"kube-system/kube-proxy-zz9"}) {
		t.Errorf("evicted %v %v", evicted, err)
	}
	pods, _ := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	nodes, _ := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if len(pods.Items) != 1 || pods.Items[0].Name != "kube-proxy-aa1" || len(nodes.Items) != 0 {
		t.Errorf("left: %d pods, %d nodes", len(pods.Items), len(nodes.Items))
	}
}
