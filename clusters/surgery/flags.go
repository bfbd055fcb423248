// Package surgery reads and changes what runs inside kind nodes: kubelet
// flags in kubeadm-flags.env and control-plane flags in static pod manifests.
package surgery

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/google/shlex"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/yaml"

	"github.com/ndfq/ndfq/clusters/topology"
)

// KubeletFlagsFile is where kubeadm leaves the kubelet's per-node flags.
const KubeletFlagsFile = "/var/lib/kubelet/kubeadm-flags.env"

// ManifestPath is a control-plane component's static pod manifest.
func ManifestPath(component string) string { return "/etc/kubernetes/manifests/" + component + ".yaml" }

// ReadFile is a file inside a kind node.
func ReadFile(node nodes.Node, path string) ([]byte, error) {
	var out bytes.Buffer
	if err := node.Command("cat", path).SetStdout(&out).Run(); err != nil {
		return nil, fmt.Errorf("read %s on %s: %w", path, node, err)
	}
	return out.Bytes(), nil
}

// ParseGates parses a --feature-gates value ("A=true,B=false").
func ParseGates(value string) (map[string]bool, error) {
	gates := map[string]bool{}
	for _, kv := range strings.Split(value, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		b, err := strconv.ParseBool(v)
		if !ok || err != nil {
			return nil, fmt.Errorf("feature gate %q is not Name=true|false", kv)
		}
		gates[k] = b
	}
	return gates, nil
}

// kubeletArgs splits KUBELET_KUBEADM_ARGS="..." into flags.
func kubeletArgs(env []byte) ([]string, error) {
	for _, line := range strings.Split(string(env), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "KUBELET_KUBEADM_ARGS="); ok {
			return shlex.Split(strings.Trim(v, `"`))
		}
	}
	return nil, fmt.Errorf("no KUBELET_KUBEADM_ARGS in %s", KubeletFlagsFile)
}

func gatesFromArgs(args []string) (map[string]bool, error) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--feature-gates="); ok {
			return ParseGates(v)
		}
	}
	return map[string]bool{}, nil
}

// KubeletGates are the gates the node's kubelet is started with.
func KubeletGates(node nodes.Node) (map[string]bool, error) {
	env, err := ReadFile(node, KubeletFlagsFile)
	if err != nil {
		return nil, err
	}
	return gatesOfEnv(env)
}

// gatesOfEnv are the gates a kubeadm-flags.env starts the kubelet with.
func gatesOfEnv(env []byte) (map[string]bool, error) {
	args, err := kubeletArgs(env)
	if err != nil {
		return nil, err
	}
	return gatesFromArgs(args)
}

// StaticPodGates are the gates a control-plane component's manifest sets.
func StaticPodGates(node nodes.Node, component string) (map[string]bool, error) {
	args, err := StaticPodArgs(node, component)
	if err != nil {
		return nil, err
	}
	return gatesFromArgs(args)
}

// StaticPodArgs are the command and arguments of a control-plane
// component's container in its manifest.
func StaticPodArgs(node nodes.Node, component string) ([]string, error) {
	data, err := ReadFile(node, ManifestPath(component))
	if err != nil {
		return nil, err
	}
	var pod corev1.Pod
	if err := yaml.Unmarshal(data, &pod); err != nil {
		return nil, fmt.Errorf("%s on %s: %w", ManifestPath(component), node, err)
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == component {
			return append(append([]string{}, c.Command...), c.Args...), nil
		}
	}
	return nil, fmt.Errorf("%s on %s has no container %s", ManifestPath(component), node, component)
}

// SetStaticPodGates rewrites a control-plane component's manifest so it
// starts with exactly these explicit gates (nil: none), keeping every other
// flag; the kubelet restarts the pod. It returns the gates it had. Callers
// wait until the component's metrics show the new values.
func SetStaticPodGates(node nodes.Node, component string, gates map[string]bool) (map[string]bool, error) {
	return SetStaticPodFlags(node, component, gates, nil)
}

// SetStaticPodFlags is SetStaticPodGates that also sets other flags in the
// same write (one restart): each args entry sets --name=value, or removes
// --name where value is "" (e.g. emulated-version for a 1.37 rollback).
func SetStaticPodFlags(node nodes.Node, component string, gates map[string]bool, args map[string]string) (map[string]bool, error) {
	path := ManifestPath(component)
	data, err := ReadFile(node, path)
	if err != nil {
		return nil, err
	}
	updated, previous, err := setManifestFlags(data, component, gates, args)
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w", path, node, err)
	}
	return previous, WriteFile(node, path, updated)
}

// setManifestFlags replaces --feature-gates, and the flags named in args,
// in the component container's command of a static pod manifest.
func setManifestFlags(manifest []byte, component string, gates map[string]bool, args map[string]string) ([]byte, map[string]bool, error) {
	var pod corev1.Pod
	if err := yaml.Unmarshal(manifest, &pod); err != nil {
		return nil, nil, err
	}
	replaced := func(a string) bool {
		if strings.HasPrefix(a, "--feature-gates=") {
			return true
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		_, ok := args[name]
		return ok && strings.HasPrefix(a, "--")
	}
	for i, c := range pod.Spec.Containers {
		if c.Name != component {
			continue
		}
		previous, err := gatesFromArgs(append(append([]string{}, c.Command...), c.Args...))
		if err != nil {
			return nil, nil, err
		}
		var cmd []string
		for _, a := range c.Command {
			if !replaced(a) {
				cmd = append(cmd, a)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(args)) {
			if args[name] != "" {
				cmd = append(cmd, "--"+name+"="+args[name])
			}
		}
		if len(gates) > 0 {
			cmd = append(cmd, "--feature-gates="+topology.FormatGates(gates))
		}
		pod.Spec.Containers[i].Command = cmd
		out, err := yaml.Marshal(&pod)
		return out, previous, err
	}
	return nil, nil, fmt.Errorf("no container %s", component)
}
