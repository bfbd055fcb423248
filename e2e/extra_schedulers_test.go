//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("Extra schedulers of the topology", ndf, Label("scheduling", "extra-schedulers"), func() {
	ExtraSchedulersSpec(context.TODO(), func() ExtraSchedulersSpecInput { return ExtraSchedulersSpecInput{input()} })
})
