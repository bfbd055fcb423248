//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("Scheduling by declared features", ndf, Label("scheduling"), func() {
	SchedulingSpec(context.TODO(), func() SchedulingSpecInput { return SchedulingSpecInput{input()} })
})
