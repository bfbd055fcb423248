//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("ResourceSlices that map node allocatable resources", ndf, Label("admission", "resourceslice"), func() {
	ResourceSliceSpec(context.TODO(), func() ResourceSliceSpecInput { return ResourceSliceSpecInput{input()} })
})
