//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("Staged rollout of NodeDeclaredFeatures into a running fleet", ndf, disruptive, Serial, Ordered, func() {
	StagedRolloutSpec(context.TODO(), func() StagedRolloutSpecInput { return StagedRolloutSpecInput{input()} })
})
