//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("Declarations are facts, not labels or forgeries", ndf, Label("forgery"), Serial, func() {
	ForgerySpec(context.TODO(), func() ForgerySpecInput { return ForgerySpecInput{input()} })
})
