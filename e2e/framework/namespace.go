package framework

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ndfq/ndfq/internal/poll"
	"github.com/ndfq/ndfq/probes"
)

// NewNamespace makes a namespace for one spec; the returned cleanup deletes
// it and waits (wait-namespace-gone) until it is gone.
func (e *Env) NewNamespace(ctx context.Context, prefix string) (string, func(context.Context) error, error) {
	ns, err := e.Clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "ndfq-" + prefix + "-",
		Labels:       map[string]string{"app.kubernetes.io/managed-by": "ndfq"},
	}}, metav1.CreateOptions{})
	if err != nil {
		return "", nil, fmt.Errorf("create namespace: %w", err)
	}
	name := ns.Name
	if err := probes.WaitDefaultServiceAccount(ctx, e.Clientset, name); err != nil {
		return "", nil, err
	}
	cleanup := func(ctx context.Context) error {
		zero := int64(0)
		err := e.Clientset.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		return poll.Until(ctx, "wait-namespace-gone", "namespace "+name+" gone", func(ctx context.Context) (bool, string, error) {
			_, err := e.Clientset.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), "still terminating", nil
		})
	}
	return name, cleanup, nil
}
