//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

// Not Serial: its own kind cluster, which no other spec touches.
var _ = Describe("The ndfq probe CLI on a cluster ndfq did not set up", ndf, Label("cli"), func() {
	ForeignClusterSpec(context.TODO(), func() ForeignClusterSpecInput { return ForeignClusterSpecInput{input()} })
})
