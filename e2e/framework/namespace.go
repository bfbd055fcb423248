package framework

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ndfq/ndfq/internal/wait"
)

// Namespace makes a namespace for the running spec and deletes it when the
// spec ends (wait-namespace-gone). Its pods are part of the spec's failure
// evidence, dumped before anything is restored.
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
		zero := int64(0)
		err := e.Clientset.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		if err != nil && !apierrors.IsNotFound(err) {
			Expect(err).NotTo(HaveOccurred(), "delete namespace %s", name)
		}
		Expect(waitNamespaceGone(ctx, e.Clientset, name)).To(Succeed())
	}, NodeTimeout(wait.MustGet(wait.NamespaceGone).Timeout+30*time.Second))
	Expect(wait.ForDefaultServiceAccount(ctx, e.Clientset, name)).To(Succeed())
	return name
}

// waitNamespaceGone waits (wait-namespace-gone) until a deleted namespace
// is gone, not terminating: the next spec may make one of the same name.
func waitNamespaceGone(ctx context.Context, cs kubernetes.Interface, name string) error {
	return wait.Until(ctx, wait.NamespaceGone, fmt.Sprintf("namespace %s gone", name), func(ctx context.Context) (bool, string, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), "still terminating", nil
	})
}
