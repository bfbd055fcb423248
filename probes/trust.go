package probes

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// WriteDeclaredDryRun patches node's status.declaredFeatures to set as a
// server-side dry run (nothing is stored) and returns the apiserver's
// answer: 200, or the code and message of its refusal.
func WriteDeclaredDryRun(ctx context.Context, cs kubernetes.Interface, node string, set []string) (UpdateResult, error) {
	res := UpdateResult{Node: node}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"declaredFeatures": set}})
	if err != nil {
		return res, err
	}
	_, err = cs.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, patch, metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}}, "status")
	if err == nil {
		res.Code = 200
		return res, nil
	}
	if answered(err, &res) {
		return res, nil
	}
	return res, fmt.Errorf("patch node %s status: %w", node, err)
}
