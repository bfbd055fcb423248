package probes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ndfq/ndfq/fixtures"
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

// Decisions are timed from sending the create to a watch seeing the
// decision: a control pod decided in 40 ms is not 0 s (issue 27). A watch
// that saw it later than the server's whole-second stamps allow is held
// to them; a pod it never saw keeps the stamps.
func TestDecisionsTimedByTheWatch(t *testing.T) {
	sent := time.Date(2026, 12, 5, 15, 0, 0, 500_000_000, time.UTC)
	d := &decisions{stop: func() {}, seen: map[string]time.Time{
		"ctl":   sent.Add(40 * time.Millisecond),
		"probe": sent.Add(1500 * time.Millisecond),
		"late":  sent.Add(9 * time.Second), // a loaded machine's watch, 2 s stamped
	}}
	placements := []PoolProbe{
		{pod: "ctl", created: sent, Decision: 0, DecisionFrom: DecisionFromCondition},
		{pod: "probe", created: sent, Decision: 2 * time.Second, DecisionFrom: DecisionFromCondition},
		{pod: "late", created: sent, Decision: 2 * time.Second, DecisionFrom: DecisionFromCondition},
		{pod: "unseen", created: sent, Decision: time.Second, DecisionFrom: DecisionFromCondition},
	}
	d.time(placements)
	for i, want := range []struct {
		d    time.Duration
		from string
	}{{40 * time.Millisecond, decisionFromWatch}, {1500 * time.Millisecond, decisionFromWatch}, {3 * time.Second, decisionFromWatch}, {time.Second, DecisionFromCondition}} {
		if placements[i].Decision != want.d || placements[i].DecisionFrom != want.from {
			t.Errorf("%s: %s by %s, want %s by %s", placements[i].pod, placements[i].Decision, placements[i].DecisionFrom, want.d, want.from)
		}
	}
}

// What no probe pod asks for is named: a probe whose apiserver gate is off
// (updates need NodeDeclaredFeatures too), and a feature without a probe.
func TestNotProbed(t *testing.T) {
	on := func(gates ...string) Gates {
		g := Gates{}
		for _, n := range gates {
			g[n] = GateState{Enabled: true}
		}
		return g
	}
	p := &prober{minor: "1.38", api: on(fixtures.NodeDeclaredFeatures, fixtures.RestartAllContainersOnContainerExits, fixtures.UserNamespacesHostNetworkSupport,
		fixtures.PodCertificateMLDSA, fixtures.InPlacePodLevelResourcesVerticalScaling, fixtures.InPlacePodVerticalScalingInitContainers, fixtures.InPlacePodVerticalScalingMemoryBackedVolumes,
		fixtures.SecurityProfileOCI, fixtures.TranslateStreamCloseWebsocketRequests, fixtures.DRANodeAllocatableResources, fixtures.DRAOptionalNodeOperations)}
	got := fmt.Sprint(p.notProbed())
	want := "[{SecurityProfileOCI scheduling  false ndfq has no scheduling probe for it (a seccompProfile of type OCI on the pod or a container)} {VolumeBindMountOptions scheduling VolumeBindMountOptions false kube-apiserver has VolumeBindMountOptions unknown to this component}]"
	if got != want {
		t.Errorf("1.38, VolumeBindMountOptions off:\n got %s\nwant %s", got, want)
	}
	// A feature without a probe whose field the apiserver refuses: no pod
	// could ask for it, which is said with the gate, not left unchecked.
	delete(p.api, fixtures.SecurityProfileOCI)
	if got := fmt.Sprint(p.notProbed()[0]); got != "{SecurityProfileOCI scheduling SecurityProfileOCI false kube-apiserver has SecurityProfileOCI unknown to this component}" {
		t.Errorf("1.38, SecurityProfileOCI off: %s", got)
	}
	p.api[fixtures.SecurityProfileOCI] = GateState{Enabled: true}
	p.api[fixtures.NodeDeclaredFeatures] = GateState{}
	for _, n := range p.notProbed() {
		if n.At == "update" && n.GateOff != fixtures.NodeDeclaredFeatures {
			t.Errorf("NodeDeclaredFeatures off: %+v", n)
		}
	}
	if n := len(p.notProbed()); n != 2+3+1 {
		t.Errorf("NodeDeclaredFeatures off: %d not probed, want the 2 above, the 3 update probes of 1.38 and the ResourceSlice's: %v", n, p.notProbed())
	}
	// The features no pod field asks for are named where their path is off.
	p.api = on(fixtures.NodeDeclaredFeatures)
	var paths []string
	for _, n := range p.notProbed() {
		if n.At == "streaming" || n.Feature == fixtures.DRANodeAllocatableResources || n.Feature == fixtures.DRAOptionalNodeOperations {
			paths = append(paths, n.Feature+"/"+n.GateOff)
		}
	}
	if want := "[DRAOptionalNodeOperations/DRAOptionalNodeOperations ExtendWebSocketsToKubelet/TranslateStreamCloseWebsocketRequests DRANodeAllocatableResources/DRANodeAllocatableResources]"; fmt.Sprint(paths) != want {
		t.Errorf("path features with their gates off: %v, want %s", paths, want)
	}
}

// Waits read the run's watch: a decision and a start are seen from its
// events, with no polling, and a pod that fails is said at once.
func TestWaitsReadTheWatch(t *testing.T) {
	cs := fake.NewClientset()
	gets := 0
	cs.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) { gets++; return false, nil, nil })
	p := &prober{cs: cs, ns: "ns", id: "abcde"}
	watched, err := p.watchDecisions(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer watched.stop()
	p.watched = watched
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ndfq-abcde-p-a-0", Namespace: "ns", Labels: map[string]string{RunLabel: "abcde"}}}
	go func() {
		time.Sleep(50 * time.Millisecond)
		bound := pod.DeepCopy()
		bound.Spec.NodeName = "a1"
		bound.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
		_, _ = cs.CoreV1().Pods("ns").Update(context.Background(), bound, metav1.UpdateOptions{})
		running := bound.DeepCopy()
		running.Status.Phase = corev1.PodRunning
		running.Status.Conditions = append(running.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
		_, _ = cs.CoreV1().Pods("ns").UpdateStatus(context.Background(), running, metav1.UpdateOptions{})
	}()
	res, err := p.place(context.Background(), pod)
	if err != nil || res.Node != "a1" {
		t.Fatalf("placement %+v %v", res, err)
	}
	got, err := p.started(context.Background(), pod.Name, nil)
	if err != nil || got.Status.Phase != corev1.PodRunning || gets != 0 {
		t.Errorf("started: %v %v, %d gets (want none: the watch)", got, err, gets)
	}
	failed := pod.DeepCopy()
	failed.Name, failed.Status.Phase, failed.Status.Reason = "ndfq-abcde-u-a-0", corev1.PodFailed, "PodFeatureUnsupported"
	if _, err := cs.CoreV1().Pods("ns").Create(context.Background(), failed, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.started(context.Background(), failed.Name, nil); err == nil || !strings.Contains(err.Error(), "PodFeatureUnsupported") {
		t.Errorf("a failed pod: %v", err)
	}
}
