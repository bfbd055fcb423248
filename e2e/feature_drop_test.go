//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("Rollout and rollback on a running fleet: one feature off on a kubelet", ndf, disruptive, Serial, func() {
	FeatureDropSpec(context.TODO(), func() FeatureDropSpecInput { return FeatureDropSpecInput{input()} })
})
