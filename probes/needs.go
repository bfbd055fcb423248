package probes

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"
	"k8s.io/component-helpers/nodedeclaredfeatures/features"
	"k8s.io/component-helpers/nodedeclaredfeatures/types"
)

// PodNeeds is what the scheduler plugin infers a pod needs, computed by
// the same component-helpers registry (the one ndfq is built with) for a
// control plane of controlPlaneVersion.
func PodNeeds(pod *corev1.Pod, controlPlaneVersion string) ([]string, error) {
	v, err := version.ParseGeneric(controlPlaneVersion)
	if err != nil {
		return nil, err
	}
	fw := ndf.New(features.AllFeatures)
	set, err := fw.InferForPodScheduling(&types.PodInfo{Spec: &pod.Spec, Status: &pod.Status}, v)
	if err != nil {
		return nil, err
	}
	return fw.Unmap(set)
}
