//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("The live cluster is the topology", Label("topology"), func() {
	TopologySpec(context.TODO(), func() TopologySpecInput { return TopologySpecInput{input()} })
})
