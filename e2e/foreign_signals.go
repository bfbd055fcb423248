//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/wait"
)

// ForeignSignalsSpecInput is the input of ForeignSignalsSpec.
type ForeignSignalsSpecInput struct{ framework.SpecInput }

// foreignDenials is how many updates the policy must deny.
const foreignDenials = 3

// ForeignSignalsSpec proves a foreign answer shows in the foreign series:
// a ValidatingAdmissionPolicy denies updates of a control pod the
// validator admits (it needs nothing), and the suite's Prometheus sees the
// policy's counter rise by every denial while the validator's rejection
// counter stays where it was. Serial: no other spec sends updates.
func ForeignSignalsSpec(_ context.Context, inputGetter func() ForeignSignalsSpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("ForeignSignalsSpec"); e = in.Env })

	for _, cell := range claims.Matrix(t) {
		if cell.Kind != claims.ForeignSignals {
			continue
		}
		text := fmt.Sprintf("a ValidatingAdmissionPolicy's %d denials of pod updates rise in %s, and the validator's rejection counter does not move", foreignDenials, cell.Feature)
		cellIt(cell, text, func(ctx SpecContext) {
			ns := e.Namespace(ctx, "foreign-signals")
			policy := denyLabelledPodUpdates(ctx, e, ns)

			By("a control pod, which needs nothing the validator would refuse")
			pod := framework.AnyPod("foreign-signals")
			pod.Labels[denyLabel] = "true"
			e.Place(ctx, ns, pod)

			prom, err := e.PrometheusUp(ctx)
			Expect(err).NotTo(HaveOccurred(), "the suite's Prometheus")
			policySeries := fmt.Sprintf(`sum(%s{%s,policy=%q})`, fixtures.SignalPolicyRejections.Name, fixtures.SignalPolicyRejections.Selector, policy)
			validatorSeries := "sum(" + fixtures.SignalValidatorRejections.Series() + ")"
			read := func(at time.Time) (policyN, validatorN float64) {
				Expect(prom.WaitScrapedAfter(ctx, at)).To(Succeed())
				policyN, err := prom.Sum(ctx, policySeries, time.Now())
				Expect(err).NotTo(HaveOccurred())
				validatorN, err = prom.Sum(ctx, validatorSeries, time.Now())
				Expect(err).NotTo(HaveOccurred())
				return policyN, validatorN
			}
			policyFrom, validatorFrom := read(time.Now())

			By(fmt.Sprintf("updating the pod until the policy has denied %d updates in its own words", foreignDenials))
			want := fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request", policy, policy)
			denied, i := 0, 0
			Expect(wait.Until(ctx, wait.API, "the policy to deny "+fmt.Sprint(foreignDenials)+" updates", func(ctx context.Context) (bool, string, error) {
				i++
				patch := fmt.Sprintf(`{"metadata":{"annotations":{"ndfq.io/touch":"%d"}}}`, i)
				_, err := e.Clientset.CoreV1().Pods(ns).Patch(ctx, pod.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
				switch {
				case err == nil:
					return false, "admitted (the policy is not in force yet)", nil
				case !apierrors.IsForbidden(err):
					return false, "", fmt.Errorf("update %d: %w", i, err)
				}
				Expect(err.Error()).To(ContainSubstring(want), "update %d was refused, but not in the policy's words", i)
				denied++
				return denied >= foreignDenials, fmt.Sprintf("%d denied", denied), nil
			})).To(Succeed())
			policyTo, validatorTo := read(time.Now())

			seen := claims.CountedApartSeen(policyTo-policyFrom, validatorTo-validatorFrom, denied)
			framework.RecordCell(cell, "", seen, fmt.Sprintf("%s: %g -> %g; %s: %g -> %g; %d denied by %s", policySeries, policyFrom, policyTo, validatorSeries, validatorFrom, validatorTo, denied, policy))
			Expect(seen).To(Equal(cell.Expect))
		}, Serial)
	}
}

// denyLabel marks the pods whose updates the spec's policy denies.
const denyLabel = "ndfq.io/foreign-deny"

// denyLabelledPodUpdates installs a ValidatingAdmissionPolicy and its
// binding that deny every update of a pod labelled denyLabel in ns, and
// removes them when the spec ends; it returns their name.
func denyLabelledPodUpdates(ctx context.Context, e *framework.Env, ns string) string {
	GinkgoHelper()
	name := ns + "-deny"
	By("a ValidatingAdmissionPolicy " + name + " that denies updates of " + ns + "'s pods labelled " + denyLabel)
	policies := e.Clientset.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	bindings := e.Clientset.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
	_, err := policies.Create(ctx, &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Update},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
				},
			}}},
			MatchConditions: []admissionv1.MatchCondition{{Name: "labelled", Expression: fmt.Sprintf("has(object.metadata.labels) && %q in object.metadata.labels", denyLabel)}},
			// A 403, as a policy engine's rejection reads (a policy's default is 422 Invalid).
			Validations: []admissionv1.Validation{{Expression: "false", Message: "ndfq's foreign-signals spec denies this update", Reason: ptr.To(metav1.StatusReasonForbidden)}},
		},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		Expect(ignoreNotFound(policies.Delete(ctx, name, metav1.DeleteOptions{}))).To(Succeed())
	})
	_, err = bindings.Create(ctx, &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns},
			}},
		},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		Expect(ignoreNotFound(bindings.Delete(ctx, name, metav1.DeleteOptions{}))).To(Succeed())
	})
	return name
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
