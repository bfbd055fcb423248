package probes

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/ndfq/ndfq/internal/wait"
)

// refusing makes pod creation fail with err the first n times.
func refusing(n int, err error) *fake.Clientset {
	cs := fake.NewClientset()
	cs.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		if n == 0 {
			return false, nil, nil
		}
		n--
		return true, nil, err
	})
	return cs
}

// The words are the ServiceAccount admission plugin's.
var noDefaultSA = apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p",
	errors.New(`error looking up service account ns/default: serviceaccount "default" not found`))

func TestCreatePodWaitsForTheDefaultServiceAccount(t *testing.T) {
	t.Setenv(wait.EnvVar(wait.API), "2s,10ms")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}
	if _, err := CreatePod(context.Background(), refusing(3, noDefaultSA), "ns", pod); err != nil {
		t.Fatalf("three refusals before the ServiceAccount exists: %v", err)
	}

	t.Setenv(wait.EnvVar(wait.API), "50ms,10ms")
	_, err := CreatePod(context.Background(), refusing(1000, noDefaultSA), "ns", pod)
	if err == nil || apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "no ServiceAccount default") {
		t.Fatalf("a lasting refusal must say the ServiceAccount is missing, not read as a 403: %v", err)
	}

	denied := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p", errors.New(`User "u" cannot create resource "pods"`))
	if _, err := CreatePod(context.Background(), refusing(1, denied), "ns", pod); !apierrors.IsForbidden(err) {
		t.Fatalf("a missing permission is returned at once, as the 403 it is: %v", err)
	}
}

// With WaitCleanup (--wait-cleanup, the suites) the probe's cleanup waits
// until its pods are gone from their nodes: a drain right after it must
// not find them (stop 22's CI failure). Each is
// deleted with a grace period (a forced delete would drop the object while
// its container still runs). Pods still there after wait-pods-gone are
// said, and cleanup ends.
func TestCleanupWaitsForThePodsToGo(t *testing.T) {
	t.Setenv(wait.EnvVar(wait.PodsGone), "300ms,10ms")
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{RunLabel: "r"}}}
	}
	lingering := 3 // lists that still find pod b after its deletion
	cs := fake.NewClientset(pod("a"), pod("b"))
	cs.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if lingering > 0 {
			lingering--
			return true, &corev1.PodList{Items: []corev1.Pod{*pod("b")}}, nil
		}
		return false, nil, nil
	})
	var graces []int64
	var mu sync.Mutex
	cs.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		graces = append(graces, ptr.Deref(a.(k8stesting.DeleteActionImpl).DeleteOptions.GracePeriodSeconds, -1))
		return false, nil, nil
	})
	var said []string
	p := &prober{cs: cs, ns: "ns", created: []string{"a", "b"}, in: RunInput{WaitCleanup: true, Progress: func(f string, args ...any) { said = append(said, f) }}}
	p.deleteCreated(context.Background())
	if lingering != 0 {
		t.Errorf("cleanup ended while pod b was still there (%d lists left)", lingering)
	}
	if !slices.Equal(graces, []int64{1, 1}) {
		t.Errorf("pods deleted with grace periods %v, want 1 s each (-1: none given)", graces)
	}
	if strings.Contains(strings.Join(said, "\n"), "not gone") {
		t.Errorf("said %q for pods that went", said)
	}

	lingering, said = 1<<30, nil
	if err := cs.Tracker().Add(pod("b")); err != nil {
		t.Fatal(err)
	}
	p.deleteCreated(context.Background())
	if !strings.Contains(strings.Join(said, "\n"), "not gone") {
		t.Errorf("a pod that stays must be said: %q", said)
	}
}

// A pod dropped once its answer was in is deleted once: the run's cleanup
// deletes only the others, and still waits for every pod it created.
func TestDroppedPodsAreDeletedOnce(t *testing.T) {
	t.Setenv(wait.EnvVar(wait.PodsGone), "300ms,10ms")
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{RunLabel: "r"}}}
	}
	cs := fake.NewClientset(pod("a"), pod("b"))
	var deleted []string
	var mu sync.Mutex
	cs.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		deleted = append(deleted, a.(k8stesting.DeleteActionImpl).Name)
		return false, nil, nil
	})
	p := &prober{cs: cs, ns: "ns", created: []string{"a", "b"}, in: RunInput{WaitCleanup: true}}
	p.drop(context.Background(), "a")
	p.deleteCreated(context.Background())
	if !slices.Equal(deleted, []string{"a", "b"}) {
		t.Errorf("deleted %v, want a (dropped) then b (at cleanup), each once", deleted)
	}
}
