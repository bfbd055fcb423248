package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// DumpState writes every node's YAML and the events (of namespace, or of
// all namespaces when empty) into ARTIFACTS/specs/<spec>/.
func (e *Env) DumpState(ctx context.Context, spec, namespace string) (string, error) {
	dir := filepath.Join(e.Settings.Artifacts, "specs", unsafeChars.ReplaceAllString(spec, "_"))
	if len(dir) > 200 {
		dir = dir[:200]
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	nodes, err := e.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return dir, err
	}
	for i := range nodes.Items {
		n := nodes.Items[i]
		n.ManagedFields = nil
		if err := writeYAML(filepath.Join(dir, "node-"+n.Name+".yaml"), n); err != nil {
			return dir, err
		}
	}
	events, err := e.Clientset.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return dir, err
	}
	if err := writeYAML(filepath.Join(dir, "events.yaml"), events); err != nil {
		return dir, err
	}
	if namespace != "" {
		pods, err := e.Clientset.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return dir, err
		}
		if err := writeYAML(filepath.Join(dir, "pods.yaml"), pods); err != nil {
			return dir, err
		}
	}
	return dir, nil
}

func writeYAML(path string, obj any) error {
	data, err := yaml.Marshal(obj)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, data, 0o644)
}
