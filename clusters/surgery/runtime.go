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
	var out, stderr bytes.Buffer
	// crictl's own 2 s default is shorter than a loaded node's runtime may
	// take to answer (seen once while the suite's pass ran its cells).
	if err := node.Command("crictl", "--timeout", criTimeout, "info", "-o", "json").SetStdout(&out).SetStderr(&stderr).Run(); err != nil {
		return fixtures.Runtime{}, fmt.Errorf("crictl info on %s: %w: %s", node, err, bytes.TrimSpace(stderr.Bytes()))
	}
	rt, err := parseCRIInfo(out.Bytes())
	if err != nil {
		return rt, fmt.Errorf("crictl info on %s: %w", node, err)
	}
	return rt, nil
}

// criTimeout bounds one `crictl info`: the runtime's answer, not a wait.
const criTimeout = "30s"

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
