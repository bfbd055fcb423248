//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("The ndfq probe CLI on a cluster ndfq did not set up", ndf, Label("cli"), Serial, func() {
	ForeignClusterSpec(context.TODO(), func() ForeignClusterSpecInput { return ForeignClusterSpecInput{input()} })
})
