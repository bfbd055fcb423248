//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("Node declarations", ndf, Label("declaration"), func() {
	DeclarationsSpec(context.TODO(), func() DeclarationsSpecInput { return DeclarationsSpecInput{input()} })
})
