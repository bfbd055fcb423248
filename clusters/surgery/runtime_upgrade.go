package surgery

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/ndfq/ndfq/clusters/nodeimage"
)

// runtimeDir keeps, inside a node, the runtime binaries an upgrade brought
// (runtimeDir/<name>/<path>) and the originals it replaced (runtimeDir/original).
const runtimeDir = "/opt/ndfq/runtime"

// UpgradeRuntime replaces the node's container runtime in place with the
// release runtime names, copied from a node that runs it, and restarts
// containerd only: the kubelet keeps running, as in a package upgrade.
// The first upgrade keeps the originals for RestoreRuntime.
func UpgradeRuntime(node, from nodes.Node, runtime string) error {
	paths, err := nodeimage.RuntimePaths(runtime)
	if err != nil {
		return err
	}
	stage := runtimeDir + "/" + runtime
	if err := copyFiles(from, node, paths, stage); err != nil {
		return fmt.Errorf("copy %s from %s to %s: %w", runtime, from, node, err)
	}
	script := `set -e
stage=$1; shift
orig=` + runtimeDir + `/original
if [ ! -e "$orig.paths" ]; then
  mkdir -p "$orig"
  for p in "$@"; do if [ -e "$p" ] || [ -L "$p" ]; then cp -a --parents "$p" "$orig/"; fi; done
  printf '%s\n' "$@" > "$orig.paths"
fi
for p in "$@"; do cp -p "$stage$p" "$p.ndfq-tmp" && mv "$p.ndfq-tmp" "$p"; done
systemctl restart containerd`
	return runScript(node, "upgrade the runtime to "+runtime, script, append([]string{stage}, paths...)...)
}

// RestoreRuntime puts back the runtime binaries UpgradeRuntime replaced
// (a path that was not there is removed) and restarts containerd; on a
// node never upgraded it does nothing.
func RestoreRuntime(node nodes.Node) error {
	script := `set -e
orig=` + runtimeDir + `/original
[ -e "$orig.paths" ] || exit 0
while read -r p; do rm -f "$p"; done < "$orig.paths"
cp -a "$orig/." /
rm -rf "$orig" "$orig.paths"
systemctl restart containerd`
	return runScript(node, "restore the runtime", script)
}

// copyFiles copies files (absolute paths, links followed) from one node
// into another under dir, keeping their paths.
func copyFiles(from, to nodes.Node, paths []string, dir string) error {
	rel := make([]string, len(paths))
	for i, p := range paths {
		rel[i] = strings.TrimPrefix(p, "/")
	}
	r, w := io.Pipe()
	read := make(chan error, 1)
	go func() {
		var stderr bytes.Buffer
		err := from.Command("tar", append([]string{"-chf", "-", "-C", "/"}, rel...)...).SetStdout(w).SetStderr(&stderr).Run()
		if err != nil {
			err = fmt.Errorf("%w %s", err, strings.TrimSpace(stderr.String()))
		}
		w.CloseWithError(err) //nolint:errcheck // always nil
		read <- err
	}()
	err := runScriptIn(to, "unpack "+dir, `set -e; rm -rf "$1"; mkdir -p "$1"; tar -xf - -C "$1"`, r, dir)
	r.Close() //nolint:errcheck // unblocks the reader after a failed unpack
	if readErr := <-read; readErr != nil {
		return readErr
	}
	return err
}
