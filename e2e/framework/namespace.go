package framework

import (
	"context"
	"fmt"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/ndfq/ndfq/internal/wait"
)

// Namespace makes a namespace for the running spec and removes it when the
// spec ends: its pods are deleted and awaited gone from their nodes
// (wait-pods-gone), then the namespace is deleted without waiting, since
// the namespace controller takes ~6 s per namespace here however empty it
// is. WaitNamespacesGone waits for them all at the suite's end. Its pods
// are part of the spec's failure evidence, dumped before anything is
// restored.
func (e *Env) Namespace(ctx context.Context, prefix string) string {
	GinkgoHelper()
	ns, err := e.Clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "ndfq-" + prefix + "-",
		Labels:       map[string]string{"app.kubernetes.io/managed-by": "ndfq"},
	}}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred(), "create namespace ndfq-%s-", prefix)
	name := ns.Name
	e.evidence.namespace(name)
	DeferCleanup(func(ctx SpecContext) {
		pods := e.Clientset.CoreV1().Pods(name)
		// A 1 s grace period: the kubelet stops each pod before it is gone.
		err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)}, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred(), "delete the pods of namespace %s", name)
		Expect(wait.Until(ctx, wait.PodsGone, "the pods of namespace "+name+" gone", func(ctx context.Context) (bool, string, error) {
			l, err := pods.List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			return len(l.Items) == 0, fmt.Sprintf("%d left", len(l.Items)), nil
		})).To(Succeed())
		err = e.Clientset.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			Expect(err).NotTo(HaveOccurred(), "delete namespace %s", name)
		}
		e.deletedMu.Lock()
		e.deleted = append(e.deleted, name)
		e.deletedMu.Unlock()
	}, NodeTimeout(wait.MustGet(wait.PodsGone).Timeout+30*time.Second))
	Expect(wait.ForDefaultServiceAccount(ctx, e.Clientset, name)).To(Succeed())
	return name
}

// WaitNamespacesGone waits (wait-namespace-gone) until every namespace this
// process's specs deleted is gone: the suite leaves none behind.
func (e *Env) WaitNamespacesGone(ctx context.Context) error {
	e.deletedMu.Lock()
	names := slices.Clone(e.deleted)
	e.deletedMu.Unlock()
	for _, name := range names {
		if err := waitNamespaceGone(ctx, e.Clientset, name); err != nil {
			return err
		}
	}
	return nil
}

// waitNamespaceGone waits (wait-namespace-gone) until a deleted namespace
// is gone, not terminating: the next spec may make one of the same name.
func waitNamespaceGone(ctx context.Context, cs kubernetes.Interface, name string) error {
	return wait.Until(ctx, wait.NamespaceGone, fmt.Sprintf("namespace %s gone", name), func(ctx context.Context) (bool, string, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), "still terminating", nil
	})
}
