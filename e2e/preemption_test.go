//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("Preemption for pods that need a node feature", ndf, Label("scheduling", "preemption"), func() {
	PreemptionSpec(context.TODO(), func() PreemptionSpecInput { return PreemptionSpecInput{input()} })
})
