//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("Devices that skip node operations go only to declaring nodes", ndf, Label("scheduling", "dra-node-operations"), func() {
	NodeOperationsSpec(context.TODO(), func() NodeOperationsSpecInput { return NodeOperationsSpecInput{input()} })
})
