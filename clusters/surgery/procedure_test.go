package surgery

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ndfq/ndfq/fixtures"
)

// A pod needing a feature the node loses must be moved, unless it is on
// its way out: a probe run's pods stay for a while in its terminating
// namespace, where no replacement could be made (the CI failure of stop
// 22: "unable to create new content in namespace ... being terminated").
func TestDependentPodsLeaveOutPodsOnTheirWayOut(t *testing.T) {
	probe, ok := fixtures.FeaturePodFor("1.37", fixtures.RestartAllContainersOnContainerExits)
	if !ok {
		t.Fatal("no RestartAllContainers probe for 1.37")
	}
	now := metav1.Now()
	needing := func(ns, name string) *corev1.Pod {
		p := fixtures.BasePod(name, "pool", "n-1")
		probe.Apply(p)
		p.Namespace, p.Spec.NodeName = ns, "n-1-node"
		p.Status.Phase = corev1.PodRunning
		return p
	}
	deleting := needing("app", "deleting")
	deleting.DeletionTimestamp, deleting.Finalizers = &now, []string{"x"}
	control := fixtures.BasePod("control", "pool", "n-1")
	control.Namespace, control.Spec.NodeName = "app", "n-1-node"
	cs := fake.NewClientset(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "app"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ndfq-probe-x", DeletionTimestamp: &now, Finalizers: []string{"kubernetes"}}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}},
		needing("app", "dependent"), needing("ndfq-probe-x", "probe-pod"), deleting, control,
	)
	in := DropInput{Clientset: cs, NodeName: "n-1-node", ControlPlaneVersion: "v1.37.2", Losing: []string{fixtures.RestartAllContainersOnContainerExits}}
	byFeature, dependents, err := dependentPods(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range dependents {
		names = append(names, p.Namespace+"/"+p.Name)
	}
	if !slices.Equal(names, []string{"app/dependent"}) || len(byFeature[fixtures.RestartAllContainersOnContainerExits]) != 1 {
		t.Errorf("dependents %v (by feature %d): want only app/dependent", names, len(byFeature[fixtures.RestartAllContainersOnContainerExits]))
	}
}
