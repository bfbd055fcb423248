package framework

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ndfq/ndfq/internal/wait"
)

// ExerciseRule tells a restarted sibling (honoured) from one left alone
// for the whole window (ignored), once main has exited with the code; "left
// alone" needs the sibling seen running and the kubelet's Lease renewed.
func TestExerciseRule(t *testing.T) {
	wait.ForTest(t, wait.RuleWindow, wait.Interval{Timeout: time.Second, Every: 50 * time.Millisecond})
	pod := func(siblingID string, restarts int32) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{NodeName: "n1"},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
				{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 42}}},
				{Name: "sibling", ContainerID: siblingID, RestartCount: restarts, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
			}}}
	}
	lease := func(renewed time.Time) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n1", Namespace: "kube-node-lease"}, Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: renewed}}}
	}
	alive := lease(time.Now().Add(time.Hour))
	cs := fake.NewClientset(pod("containerd://a", 0), alive)
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
	// The first look comes after the rule restarted both: main runs again
	// with no last state, the sibling has restarted once.
	both := pod("containerd://c", 1)
	both.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	restarted, err = ExerciseRule(context.Background(), fake.NewClientset(both, alive), "ns", "p", "main", "sibling", 42)
	if err != nil || !restarted {
		t.Errorf("restarted before the first look: restarted %v, %v", restarted, err)
	}
	if _, err := ExerciseRule(context.Background(), fake.NewClientset(pod("", 0), alive), "ns", "p", "main", "sibling", 42); err == nil {
		t.Error("a sibling that never ran is an error, not a verdict")
	}
	// No evidence of "ignored": a kubelet that stopped renewing, no Lease,
	// a sibling no longer running, a pod that cannot be read.
	stopped := pod("containerd://a", 0)
	stopped.Status.ContainerStatuses[1].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137}}
	// inWindow answers the first two reads (before, and main's exit) as
	// the store has them, and every read in the window with obj or err.
	inWindow := func(cs *fake.Clientset, obj runtime.Object, err error) *fake.Clientset {
		n := 0
		cs.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
			if n++; n <= 2 {
				return false, nil, nil
			}
			return true, obj, err
		})
		return cs
	}
	// The client's rate limiter refusing a read the window's end would cut
	// short is the window's end (seen in a full run under load), not a
	// failure to look: the verdict stands on the reads before it.
	limiter := fmt.Errorf("client rate limiter Wait returned an error: %w", errors.New("rate: Wait(n=1) would exceed context deadline"))
	limited := fake.NewClientset(pod("containerd://a", 0), alive)
	reads := 0
	limited.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		if reads++; reads <= 4 { // before, main's exit, two reads of the window
			return false, nil, nil
		}
		return true, nil, limiter
	})
	if restarted, err := ExerciseRule(context.Background(), limited, "ns", "p", "main", "sibling", 42); err != nil || restarted {
		t.Errorf("rate limiter at the window's end: restarted %v, %v; want left alone", restarted, err)
	}
	// But a window the limiter kept from reading at all is no evidence.
	if _, err := ExerciseRule(context.Background(), inWindow(fake.NewClientset(pod("containerd://a", 0), alive), nil, limiter), "ns", "p", "main", "sibling", 42); err == nil {
		t.Error("a window with no read of the pod: want no verdict")
	}
	for name, cs := range map[string]*fake.Clientset{
		"lease not renewed":   fake.NewClientset(pod("containerd://a", 0), lease(time.Now().Add(-time.Minute))),
		"no lease":            fake.NewClientset(pod("containerd://a", 0)),
		"sibling not running": inWindow(fake.NewClientset(pod("containerd://a", 0), alive), stopped, nil),
		"pod unreadable":      inWindow(fake.NewClientset(pod("containerd://a", 0), alive), nil, fmt.Errorf("connection refused")),
	} {
		if restarted, err := ExerciseRule(context.Background(), cs, "ns", "p", "main", "sibling", 42); err == nil {
			t.Errorf("%s: restarted %v without an error; want no verdict", name, restarted)
		}
	}
}
