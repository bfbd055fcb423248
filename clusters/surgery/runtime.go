package surgery

import (
	"bytes"
	"encoding/json"
	"fmt"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/ndfq/ndfq/fixtures"
)

// CRIReport is what the node's container runtime tells its kubelet over
// the CRI (RuntimeStatus, as `crictl info` prints it): the runtime-level
// features and whether the default handler runs user namespaces.
func CRIReport(node nodes.Node) (fixtures.Runtime, error) {
	var out bytes.Buffer
	if err := node.Command("crictl", "info", "-o", "json").SetStdout(&out).Run(); err != nil {
		return fixtures.Runtime{}, fmt.Errorf("crictl info on %s: %w", node, err)
	}
	rt, err := parseCRIInfo(out.Bytes())
	if err != nil {
		return rt, fmt.Errorf("crictl info on %s: %w", node, err)
	}
	return rt, nil
}

// criInfo is the part of `crictl info -o json` the kubelet's feature
// discovery reads; crictl prints the CRI messages with their Go JSON
// names, and leaves the default handler's empty name out.
type criInfo struct {
	Features *struct {
		UserNamespacesHostNetwork bool `json:"user_namespaces_host_network"`
		MountOptions              bool `json:"mount_options"`
	} `json:"features"`
	RuntimeHandlers []struct {
		Name     string `json:"name"`
		Features *struct {
			UserNamespaces bool `json:"user_namespaces"`
		} `json:"features"`
	} `json:"runtimeHandlers"`
}

func parseCRIInfo(data []byte) (fixtures.Runtime, error) {
	var info criInfo
	if err := json.Unmarshal(data, &info); err != nil {
		return fixtures.Runtime{}, fmt.Errorf("not the JSON crictl prints: %w", err)
	}
	var rt fixtures.Runtime
	if f := info.Features; f != nil {
		rt.UserNamespacesHostNetwork, rt.MountOptions = f.UserNamespacesHostNetwork, f.MountOptions
	}
	for _, h := range info.RuntimeHandlers {
		if h.Name == "" && h.Features != nil {
			rt.UserNamespaces = h.Features.UserNamespaces
		}
	}
	return rt, nil
}
