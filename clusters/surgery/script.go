package surgery

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
)

// runScript runs a shell script inside the node with args as $1...; its
// error names what it was doing, the node and the script's stderr.
func runScript(node nodes.Node, what, script string, args ...string) error {
	return runScriptIn(node, what, script, nil, args...)
}

func runScriptIn(node nodes.Node, what, script string, stdin io.Reader, args ...string) error {
	var stderr bytes.Buffer
	cmd := node.Command("sh", append([]string{"-c", script, "sh"}, args...)...).SetStderr(&stderr)
	if stdin != nil {
		cmd = cmd.SetStdin(stdin)
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s on %s: %w %s", what, node, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
