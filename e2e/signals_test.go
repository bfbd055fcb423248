//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("Signals operators watch", ndf, Label("signals"), func() {
	SignalsSpec(context.TODO(), func() SignalsSpecInput { return SignalsSpecInput{input()} })
})
