package probes

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
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

// A decision is timed by the control plane's stamps (creation to the
// PodScheduled condition), not by when a slow or throttled poll saw it.
func TestPlaceTimesTheDecisionByTheServersStamps(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 12, 5, 15, 0, 0, 0, time.UTC))
	for _, c := range []struct {
		name string
		cond corev1.PodCondition
		node string
	}{
		{"bound", corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, "n1"},
		{"refused", corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "no"}, ""},
	} {
		cs := fake.NewClientset(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "ns"}})
		cs.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
			cond := c.cond
			cond.LastTransitionTime = metav1.NewTime(created.Add(3 * time.Second))
			return true, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", CreationTimestamp: created},
				Spec: corev1.PodSpec{NodeName: c.node}, Status: corev1.PodStatus{Conditions: []corev1.PodCondition{cond}}}, nil
		})
		res, err := Place(context.Background(), cs, "ns", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}})
		if err != nil || res.Decision != 3*time.Second || res.Node != c.node || res.Unschedulable != (c.node == "") {
			t.Errorf("%s: %+v, %v; want decided in 3s", c.name, res, err)
		}
	}
}
