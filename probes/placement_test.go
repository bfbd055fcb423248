package probes

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// ExerciseRule tells a restarted sibling (honoured) from one left alone
// for the whole window (ignored), once main has exited with the code.
func TestExerciseRule(t *testing.T) {
	t.Setenv("NDFQ_INTERVAL_WATCH_RESTART_RULE", "1s,50ms")
	pod := func(siblingID string, restarts int32) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
			{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 42}}},
			{Name: "sibling", ContainerID: siblingID, RestartCount: restarts},
		}}}
	}
	cs := fake.NewClientset(pod("containerd://a", 0))
	restarted, err := ExerciseRule(context.Background(), cs, "ns", "p", "main", "sibling", 42)
	if err != nil || restarted {
		t.Errorf("sibling left alone: restarted %v, %v", restarted, err)
	}
	// The kubelet restarts the sibling while the window is open.
	go func() {
		time.Sleep(150 * time.Millisecond)
		_, _ = cs.CoreV1().Pods("ns").UpdateStatus(context.Background(), pod("containerd://b", 1), metav1.UpdateOptions{})
	}()
	restarted, err = ExerciseRule(context.Background(), cs, "ns", "p", "main", "sibling", 42)
	if err != nil || !restarted {
		t.Errorf("sibling restarted: restarted %v, %v", restarted, err)
	}
	if _, err := ExerciseRule(context.Background(), fake.NewClientset(pod("", 0)), "ns", "p", "main", "sibling", 42); err == nil {
		t.Error("a sibling that never ran is an error, not a verdict")
	}
}
