//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("Streaming to every kind of kubelet", ndf, Label("streaming"), func() {
	StreamingSpec(context.TODO(), func() StreamingSpecInput { return StreamingSpecInput{input()} })
})
