package probes

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// Cleanup removes exactly what runs labelled: the namespaces a run made,
// probe pods in a namespace the probe keeps; nothing else.
func TestCleanupRemovesOnlyWhatRunsLabelled(t *testing.T) {
	run := map[string]string{RunLabel: "abcde"}
	cs := fake.NewClientset(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ndfq-probe-x1", Labels: run}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ndfq-probe-y2", Labels: map[string]string{RunLabel: "fghij"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ndfq-abcde-p0", Namespace: "ndfq-probe", Labels: run}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ndfq-probe"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a"}},
	)
	ctx := context.Background()
	left, err := Cleanup(ctx, CleanupInput{Clientset: cs, RunID: "abcde"})
	if err != nil || !slices.Equal(left.Namespaces, []string{"ndfq-probe-x1"}) || !slices.Equal(left.Pods, []string{"ndfq-probe/ndfq-abcde-p0"}) {
		t.Errorf("one run: %+v %v", left, err)
	}
	left, err = Cleanup(ctx, CleanupInput{Clientset: cs})
	if err != nil || !slices.Equal(left.Namespaces, []string{"ndfq-probe-y2"}) || len(left.Pods) != 0 {
		t.Errorf("every run: %+v %v", left, err)
	}
	nss, _ := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	pods, _ := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if len(nss.Items) != 1 || nss.Items[0].Name != "team-a" || len(pods.Items) != 2 {
		t.Errorf("left standing: %d namespaces, %d pods; want team-a and the two pods named web", len(nss.Items), len(pods.Items))
	}
	for _, p := range pods.Items {
		if p.Name != "web" {
			t.Errorf("pod %s/%s left", p.Namespace, p.Name)
		}
	}
}
