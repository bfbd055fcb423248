package probes

import (
	"context"
	"fmt"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// CreateSliceDryRun creates the ResourceSlice as a server-side dry run
// (admission runs, nothing is stored) and returns the apiserver's answer:
// 201, or the code and message of its refusal. Node is the slice's node.
func CreateSliceDryRun(ctx context.Context, cs kubernetes.Interface, slice *resourcev1.ResourceSlice) (UpdateResult, error) {
	res := UpdateResult{}
	if slice.Spec.NodeName != nil {
		res.Node = *slice.Spec.NodeName
	}
	_, err := cs.ResourceV1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err == nil {
		res.Code = 201
		return res, nil
	}
	if answered(err, &res) {
		return res, nil
	}
	return res, fmt.Errorf("create ResourceSlice %s: %w", slice.Name, err)
}
