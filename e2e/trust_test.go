//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("The write path's trust boundary", ndf, Label("trust"), func() {
	TrustSpec(context.TODO(), func() TrustSpecInput { return TrustSpecInput{input()} })
})
