package surgery

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/progress"
	"github.com/ndfq/ndfq/internal/wait"
)

// NoCapacityError is the procedure refusing to close a gate: pods on the
// node need a feature no other Ready, schedulable node declares.
type NoCapacityError struct {
	Node    string
	Feature string
	Pods    []string
}

func (e *NoCapacityError) Error() string {
	return fmt.Sprintf("not closing gates on %s: %s need %s and no other Ready, schedulable node declares it; add capacity that keeps the feature or stop those workloads first",
		e.Node, strings.Join(e.Pods, ", "), e.Feature)
}

// DropInput is one node's kubelet losing features.
type DropInput struct {
	Clientset           kubernetes.Interface
	Node                nodes.Node
	NodeName            string
	Gates               map[string]bool // the kubelet's explicit gates afterwards
	Losing              []string        // declared features the node gives up
	ControlPlaneVersion string          // what the scheduler infers with
	// Replace recreates a bare dependent pod away from the node; pods with
	// an owner are evicted and their controller recreates them.
	Replace func(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error)
	Log     *progress.Logger
}

// DropKubeletFeatures is the safe order for turning features off on a
// kubelet: check that every pod there that needs one has somewhere to go,
// cordon, move those pods, and only then restart the kubelet with the new
// gates. It returns the gates the kubelet had. Nothing changes when the
// capacity check fails. The node stays cordoned: the caller uncordons
// once the node's declarations show the loss.
func DropKubeletFeatures(ctx context.Context, in DropInput) (map[string]bool, error) {
	needing, dependents, err := dependentPods(ctx, in)
	if err != nil {
		return nil, err
	}
	for _, f := range slices.Sorted(maps.Keys(needing)) {
		ok, err := otherNodeDeclares(ctx, in.Clientset, in.NodeName, f)
		if err != nil {
			return nil, err
		}
		if !ok {
			var names []string
			for _, p := range needing[f] {
				names = append(names, p.Namespace+"/"+p.Name)
			}
			return nil, &NoCapacityError{Node: in.NodeName, Feature: f, Pods: names}
		}
	}
	if err := Cordon(ctx, in.Clientset, in.NodeName, true); err != nil {
		return nil, err
	}
	for i := range dependents {
		if err := move(ctx, in, &dependents[i]); err != nil {
			return nil, err
		}
	}
	in.Log.Printf("%s: %d dependent pod(s) moved; restarting its kubelet with %s", in.NodeName, len(dependents), FormatGatesOrNone(in.Gates))
	return SetKubeletGates(in.Node, in.Gates)
}

func move(ctx context.Context, in DropInput, p *corev1.Pod) error {
	pods := in.Clientset.CoreV1().Pods(p.Namespace)
	if len(p.OwnerReferences) > 0 {
		ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}}
		if err := pods.EvictV1(ctx, ev); err != nil {
			return fmt.Errorf("evict %s/%s: %w", p.Namespace, p.Name, err)
		}
		return nil
	}
	if in.Replace == nil {
		return fmt.Errorf("%s/%s is a bare pod that needs a feature %s loses: move it first", p.Namespace, p.Name, in.NodeName)
	}
	repl, err := in.Replace(ctx, p)
	if err != nil {
		return fmt.Errorf("replace %s/%s: %w", p.Namespace, p.Name, err)
	}
	if _, err := wait.ForPodRunning(ctx, in.Clientset, repl.Namespace, repl.Name); err != nil {
		return fmt.Errorf("replacement %s/%s of %s: %w", repl.Namespace, repl.Name, p.Name, err)
	}
	if err := pods.Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete %s/%s after moving it: %w", p.Namespace, p.Name, err)
	}
	in.Log.Printf("moved %s/%s to %s/%s", p.Namespace, p.Name, repl.Namespace, repl.Name)
	return nil
}

// dependentPods are the node's pods that need a feature it loses, by
// feature. Pods on their way out are not: finished, being deleted, or in a
// namespace being deleted (its controller deletes them, and no
// replacement could be made there). A probe run's namespace is such a
// one for a while after the probe ends.
func dependentPods(ctx context.Context, in DropInput) (needing map[string][]corev1.Pod, dependents []corev1.Pod, err error) {
	pods, err := in.Clientset.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", in.NodeName).String()})
	if err != nil {
		return nil, nil, fmt.Errorf("list pods on %s: %w", in.NodeName, err)
	}
	namespaces, err := in.Clientset.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("list namespaces: %w", err)
	}
	terminating := map[string]bool{}
	for _, ns := range namespaces.Items {
		terminating[ns.Name] = ns.DeletionTimestamp != nil || ns.Status.Phase == corev1.NamespaceTerminating
	}
	needing = map[string][]corev1.Pod{}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.DeletionTimestamp != nil || terminating[p.Namespace] {
			continue
		}
		needs, err := fixtures.PodNeeds(&p, in.ControlPlaneVersion)
		if err != nil {
			return nil, nil, err
		}
		hit := false
		for _, f := range in.Losing {
			if slices.Contains(needs, f) {
				needing[f] = append(needing[f], p)
				hit = true
			}
		}
		if hit {
			dependents = append(dependents, p)
		}
	}
	return needing, dependents, nil
}

// otherNodeDeclares is whether some other Ready, schedulable node declares feature.
func otherNodeDeclares(ctx context.Context, cs kubernetes.Interface, except, feature string) (bool, error) {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, fmt.Errorf("list nodes: %w", err)
	}
	for _, n := range nodes.Items {
		if n.Name == except || n.Spec.Unschedulable || !wait.NodeReady(n) {
			continue
		}
		if slices.Contains(n.Status.DeclaredFeatures, feature) {
			return true, nil
		}
	}
	return false, nil
}

// Cordon marks the node (un)schedulable, as kubectl cordon does, and waits
// until the node lifecycle controller has put on (or taken off) the
// node.kubernetes.io/unschedulable taint: the scheduler filters on that
// taint, so an uncordoned node takes pods only once it is gone.
func Cordon(ctx context.Context, cs kubernetes.Interface, node string, on bool) error {
	body, _ := json.Marshal(map[string]any{"spec": map[string]any{"unschedulable": on}})
	if _, err := cs.CoreV1().Nodes().Patch(ctx, node, types.StrategicMergePatchType, body, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("cordon=%t %s: %w", on, node, err)
	}
	return wait.Until(ctx, wait.Nodes, fmt.Sprintf("%s to be tainted %s=%t", node, corev1.TaintNodeUnschedulable, on), func(ctx context.Context) (bool, string, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		tainted := slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeUnschedulable })
		return tainted == on, fmt.Sprintf("tainted=%t", tainted), nil
	})
}

// FormatGatesOrNone is FormatGates, saying "no explicit gates" when empty.
func FormatGatesOrNone(g map[string]bool) string {
	if len(g) == 0 {
		return "no explicit gates"
	}
	return "--feature-gates=" + topology.FormatGates(g)
}
