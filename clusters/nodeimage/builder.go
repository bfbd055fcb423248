// Package nodeimage builds kind node images without a registry: every
// binary from the Go module proxy, the root file system from Debian
// packages, and every image a node runs preloaded into its containerd.
// Each step is cached by the hash of its inputs.
package nodeimage

import "github.com/ndfq/ndfq/internal/progress"

// Builder holds what every build step shares.
type Builder struct {
	Cache Cache
	Log   *progress.Logger
}
