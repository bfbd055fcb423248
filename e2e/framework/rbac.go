package framework

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ndfq/ndfq/internal/wait"
)

// WaitAuthorized waits (wait-api) until the apiserver's authorizer lets
// user do verb on resource[/subresource] (in namespace, "" for any): a
// binding just created reaches the authorizer's cache a moment later, and
// a probe run in that moment is refused (seen in a full run under load).
func (e *Env) WaitAuthorized(ctx context.Context, user, verb, resource, subresource, namespace string) {
	GinkgoHelper()
	what := fmt.Sprintf("%s to be allowed to %s %s", user, verb, resource)
	if subresource != "" {
		what += "/" + subresource
	}
	Expect(wait.Until(ctx, wait.API, what, func(ctx context.Context) (bool, string, error) {
		r, err := e.Clientset.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
			User:               user,
			ResourceAttributes: &authzv1.ResourceAttributes{Verb: verb, Resource: resource, Subresource: subresource, Namespace: namespace},
		}}, metav1.CreateOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return r.Status.Allowed, r.Status.Reason, nil
	})).To(Succeed())
}
