package probes

import (
	"context"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ndfq/ndfq/fixtures"
)

// A ResourceSlice admitted without the nodeAllocatableResources it was
// sent with (an apiserver with the gate off drops them) is not the
// validator's admission: its answer says the field was dropped.
func TestSliceWithTheFieldDropped(t *testing.T) {
	slice := fixtures.ResourceSliceFor("s", "n1", true)
	cs := fake.NewClientset()
	cs.PrependReactor("create", "resourceslices", func(a k8stesting.Action) (bool, runtime.Object, error) {
		got := a.(k8stesting.CreateAction).GetObject().(*resourcev1.ResourceSlice).DeepCopy()
		for i := range got.Spec.Devices {
			got.Spec.Devices[i].NodeAllocatableResources = nil
		}
		return true, got, nil
	})
	res, err := CreateSliceDryRun(context.Background(), cs, slice)
	if err != nil || res.Answer() != "201 with nodeAllocatableResources dropped" {
		t.Errorf("%q %v", res.Answer(), err)
	}
	if res, err := CreateSliceDryRun(context.Background(), fake.NewClientset(), slice); err != nil || res.Answer() != "201" {
		t.Errorf("kept: %q %v", res.Answer(), err)
	}
}
