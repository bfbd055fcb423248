//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("Pod updates the bound node cannot honour", ndf, Label("admission"), func() {
	UpdateAdmissionSpec(context.TODO(), func() UpdateAdmissionSpecInput { return UpdateAdmissionSpecInput{input()} })
})

var _ = Describe("Kubelet-side admission of pods bound directly", ndf, Label("admission"), func() {
	KubeletAdmissionSpec(context.TODO(), func() KubeletAdmissionSpecInput { return KubeletAdmissionSpecInput{input()} })
})
