// Package clusters holds the shipped topologies; its sub-packages turn a
// topology into a running kind cluster (topology, kindconfig, lifecycle),
// build the node images it needs (nodeimage) and prepare the host (dockerhost).
package clusters

import "embed"

// Topologies are the shipped topology files, topologies/<name>.yaml.
//
//go:embed topologies/*.yaml
var Topologies embed.FS
