//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("Foreign answers in the signals", ndf, Label("signals"), func() {
	ForeignSignalsSpec(context.TODO(), func() ForeignSignalsSpecInput { return ForeignSignalsSpecInput{input()} })
})
